import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publish } from '../src/outbox/publish.js';
import type { Db } from '../src/store/db.js';
import { migrate } from '../src/store/migrate.js';
import { claimDeliveries } from '../src/store/sql/outbox/claim-deliveries.js';
import { createEmptyDb, migrateUpTo } from './helpers/migration-db.js';

/**
 * A store at migration 024 holding two tenants' outbox (queued, leased, failed and settled deliveries with
 * attempts, a delivery whose message retention already removed, and one to the other tenant's endpoint),
 * upgraded to 025: every delivery,
 * queue row and attempt takes its message's tenant (else its endpoint's), the keys lead with tenant_id,
 * the dispatcher claims what was due with the tenant, and an idempotency key becomes its tenant's.
 */
describe('migration 025: the outbox keys lead with tenant_id, over rows written before it', () => {
  let store: { db: Db; close(): Promise<void> };
  let db: Db;

  beforeAll(async () => {
    store = await createEmptyDb();
    db = store.db;
    await migrateUpTo(db, 24);
    await db.exec(`
      INSERT INTO tenants (id, name) VALUES ('m_a', 'A'), ('m_b', 'B');
      INSERT INTO endpoints (id, tenant_id, url, timeout_ms, max_in_flight) VALUES
        ('ep_a', 'm_a', 'http://127.0.0.1:9/a', 5000, 8),
        ('ep_b', 'm_b', 'http://127.0.0.1:9/b', 5000, 8);
      INSERT INTO outbox_messages (id, tenant_id, event_type, payload, idempotency_key) VALUES
        ('evt_a1', 'm_a', 'invoice.paid', '\\x7b7d', 'k1'),
        ('evt_a2', 'm_a', 'invoice.paid', '\\x7b7d', NULL),
        ('evt_b1', 'm_b', 'invoice.paid', '\\x7b7d', 'k2');
      INSERT INTO outbox_deliveries (message_id, endpoint_id, status, attempts, next_attempt_at) VALUES
        ('evt_a1', 'ep_a', 'succeeded', 1, now()),
        ('evt_a2', 'ep_a', 'pending', 0, now() - interval '1 minute'),
        ('evt_b1', 'ep_b', 'failed', 3, now()),
        ('evt_gone', 'ep_b', 'succeeded', 1, now()),
        -- A's message to B's endpoint (an operator's replay could make one before 025), not sent yet.
        ('evt_a1', 'ep_b', 'pending', 0, now() - interval '1 minute');
      INSERT INTO outbox_queue (delivery_id, endpoint_id, next_attempt_at, failed)
        SELECT id, endpoint_id, next_attempt_at, status = 'failed' FROM outbox_deliveries WHERE status IN ('pending', 'failed');
      INSERT INTO outbox_attempts (delivery_id, message_id, endpoint_id, attempt, url, started_at, duration_ms, succeeded)
        SELECT id, message_id, endpoint_id, 1, 'http://127.0.0.1:9/', now(), 5, status = 'succeeded' FROM outbox_deliveries WHERE attempts > 0;
    `);
    await migrate(db);
  });

  afterAll(async () => {
    await store?.close();
  });

  it('every delivery, queue row and attempt has its message’s tenant, else its endpoint’s', async () => {
    const rows = async (table: string, id: string) =>
      (await db.query<{ key: string; tenant_id: string }>(`SELECT ${id}::text AS key, tenant_id FROM ${table} ORDER BY 1`)).rows;
    const deliveries = (
      await db.query<{ message_id: string; tenant_id: string; status: string }>(
        'SELECT message_id, tenant_id, status FROM outbox_deliveries ORDER BY message_id, endpoint_id',
      )
    ).rows;
    expect(deliveries).toEqual([
      { message_id: 'evt_a1', tenant_id: 'm_a', status: 'succeeded' },
      // The delivery to the other tenant's endpoint stays A's history, and is not sent.
      { message_id: 'evt_a1', tenant_id: 'm_a', status: 'cancelled' },
      { message_id: 'evt_a2', tenant_id: 'm_a', status: 'pending' },
      { message_id: 'evt_b1', tenant_id: 'm_b', status: 'failed' },
      { message_id: 'evt_gone', tenant_id: 'm_b', status: 'succeeded' },
    ]);
    expect((await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM outbox_queue WHERE endpoint_id = 'ep_b' AND NOT failed`)).rows[0]!.n).toBe(0);
    const byDelivery = new Map((await rows('outbox_deliveries', 'id')).map((r) => [r.key, r.tenant_id]));
    for (const q of await rows('outbox_queue', 'delivery_id')) expect(q.tenant_id).toBe(byDelivery.get(q.key));
    const attempts = (await db.query<{ delivery_id: string; tenant_id: string }>('SELECT delivery_id::text, tenant_id FROM outbox_attempts')).rows;
    expect(attempts).toHaveLength(3);
    for (const a of attempts) expect(a.tenant_id).toBe(byDelivery.get(a.delivery_id));
  });

  it('the keys lead with tenant_id', async () => {
    const { rows } = await db.query<{ name: string; def: string }>(
      `SELECT conname AS name, pg_get_constraintdef(oid) AS def FROM pg_constraint
       WHERE conrelid::regclass::text LIKE 'outbox_%' AND contype IN ('p', 'u') ORDER BY 1`,
    );
    expect(rows).toEqual([
      { name: 'outbox_attempts_pkey', def: 'PRIMARY KEY (tenant_id, id)' },
      { name: 'outbox_deliveries_pkey', def: 'PRIMARY KEY (tenant_id, id)' },
      { name: 'outbox_messages_idempotency_key_key', def: 'UNIQUE (tenant_id, idempotency_key)' },
      { name: 'outbox_messages_pkey', def: 'PRIMARY KEY (tenant_id, id)' },
      { name: 'outbox_queue_pkey', def: 'PRIMARY KEY (tenant_id, delivery_id)' },
      // A later table of the outbox (migration 026's count of finished requests) leads with it too.
      { name: 'outbox_tenant_done_pkey', def: 'PRIMARY KEY (tenant_id)' },
    ]);
  });

  it('the dispatcher claims the delivery that was due, with its tenant', async () => {
    const claimed = await claimDeliveries(db, 10, 'after-025', 60_000);
    expect(claimed.map((r) => [r.tenant_id, r.message_id])).toEqual([['m_a', 'evt_a2']]);
  });

  it('an idempotency key is its tenant’s: another tenant publishes under it, the first tenant repeats', async () => {
    const other = await db.transaction((tx) => publish(tx, { tenantId: 'm_b', type: 'invoice.paid', idempotencyKey: 'k1', data: {} }));
    expect(other).toMatchObject({ duplicate: false, deliveries: 1 });
    const repeat = await db.transaction((tx) => publish(tx, { tenantId: 'm_a', type: 'invoice.paid', idempotencyKey: 'k1', data: {} }));
    expect(repeat).toEqual({ id: 'evt_a1', deliveries: 0, duplicate: true });
  });
});

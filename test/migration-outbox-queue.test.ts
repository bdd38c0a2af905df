import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmptyDb, migrateUpTo } from './helpers/migration-db.js';
import type { Db } from '../src/store/db.js';
import { migrate } from '../src/store/migrate.js';
import { claimDeliveries } from '../src/store/sql/outbox/claim-deliveries.js';
import { failedOutboxDeliveries } from '../src/store/sql/dashboard/stats.js';
import { replayFailed } from '../src/outbox/operations.js';
import { EVERY_TENANT } from '../src/scope.js';

interface QueueRow {
  message_id: string;
  due: boolean;
  leased: boolean;
  lease_ran_out: boolean;
  failed: boolean;
}

/** A store at migration 012, its deliveries in every state, upgraded by migrate() to the outbox queue. */
describe('migration 013: upgrading an outbox that holds deliveries', () => {
  let store: { db: Db; close(): Promise<void> };
  let db: Db;

  beforeAll(async () => {
    store = await createEmptyDb();
    db = store.db;
    await migrateUpTo(db, 12);
    await db.exec(`
      INSERT INTO endpoints (id, url, timeout_ms, max_in_flight) VALUES ('ep_m', 'http://127.0.0.1:9/hook', 5000, 2);
      INSERT INTO outbox_messages (id, event_type, payload)
        SELECT 'msg_' || s, 'invoice.paid', '\\x7b7d' FROM unnest(ARRAY['due', 'retry', 'live', 'abandoned', 'failed', 'ok', 'cancelled']) AS s;
      INSERT INTO outbox_deliveries (message_id, endpoint_id, status, attempts, next_attempt_at, lease, last_attempt_at)
      VALUES
        -- never sent, due a minute ago
        ('msg_due', 'ep_m', 'pending', 0, now() - interval '1 minute', NULL, NULL),
        -- failed once, its retry due in an hour
        ('msg_retry', 'ep_m', 'pending', 1, now() + interval '1 hour', NULL, now() - interval '1 minute'),
        -- in flight: its lease (kept in next_attempt_at) runs for another hour
        ('msg_live', 'ep_m', 'sending', 1, now() + interval '1 hour', 'old-lease-1', now() - interval '1 second'),
        -- in flight when its dispatcher died: the lease ran out five minutes ago
        ('msg_abandoned', 'ep_m', 'sending', 1, now() - interval '5 minutes', 'old-lease-2', now() - interval '10 minutes'),
        ('msg_failed', 'ep_m', 'failed', 3, now() - interval '1 hour', NULL, now() - interval '1 hour'),
        ('msg_ok', 'ep_m', 'succeeded', 1, now() - interval '1 hour', NULL, now() - interval '1 hour'),
        ('msg_cancelled', 'ep_m', 'cancelled', 0, now() - interval '1 hour', NULL, NULL);
    `);
    await migrate(db);
  });

  afterAll(async () => {
    await store?.close();
  });

  it('queues every unsettled and failed delivery, keeping leases and due times', async () => {
    const { rows } = await db.query<QueueRow>(
      `SELECT d.message_id, q.next_attempt_at <= now() AS due, coalesce(q.lease_until > now(), false) AS leased,
              coalesce(q.lease_until <= now(), false) AS lease_ran_out, q.failed
       FROM outbox_queue q JOIN outbox_deliveries d ON d.tenant_id = q.tenant_id AND d.id = q.delivery_id ORDER BY d.message_id`,
    );
    expect(rows).toEqual([
      { message_id: 'msg_abandoned', due: true, leased: false, lease_ran_out: true, failed: false },
      { message_id: 'msg_due', due: true, leased: false, lease_ran_out: false, failed: false },
      { message_id: 'msg_failed', due: true, leased: false, lease_ran_out: false, failed: true },
      { message_id: 'msg_live', due: true, leased: true, lease_ran_out: false, failed: false },
      { message_id: 'msg_retry', due: false, leased: false, lease_ran_out: false, failed: false },
    ]);
    const { rows: indexes } = await db.query<{ indexname: string }>(
      `SELECT indexname FROM pg_indexes WHERE tablename = 'outbox_deliveries' ORDER BY indexname`,
    );
    // No index of the record names a column the dispatcher changes.
    expect(indexes.map((i) => i.indexname)).toEqual([
      'outbox_deliveries_destination',
      'outbox_deliveries_endpoint',
      'outbox_deliveries_id',
      'outbox_deliveries_pkey',
    ]);
    expect(await failedOutboxDeliveries(db)).toBe(1);
  });

  it('the in-flight cap counts the lease carried over: one free slot, taken by the earliest due delivery', async () => {
    const first = await claimDeliveries(db, 100, 'new-lease', 1000);
    // max_in_flight 2, msg_live in flight: one slot. msg_abandoned was due first (its attempt started
    // ten minutes ago), and its record is still `sending`: the dispatcher records the lost attempt.
    expect(first.map((r) => [r.message_id, r.previous_status, r.attempt])).toEqual([['msg_abandoned', 'sending', 2]]);
    expect(first[0]!.previous_attempt_at).toBeInstanceOf(Date);
    expect(await claimDeliveries(db, 100, 'new-lease', 1000)).toEqual([]);
    const { rows } = await db.query<{ status: string; lease: string | null; leased: boolean }>(
      `SELECT d.status, d.lease, q.lease_until > now() AS leased FROM outbox_deliveries d JOIN outbox_queue q ON q.delivery_id = d.id
       WHERE d.message_id = 'msg_abandoned'`,
    );
    expect(rows).toEqual([{ status: 'sending', lease: 'new-lease', leased: true }]);
  });

  it('a failed delivery replayed leaves the failed ones and is due again', async () => {
    expect(await replayFailed(db, EVERY_TENANT, {})).toEqual({ replayed: 1 });
    expect(await failedOutboxDeliveries(db)).toBe(0);
    await db.query(`UPDATE endpoints SET max_in_flight = 10 WHERE id = 'ep_m'`);
    const claimed = await claimDeliveries(db, 100, 'third-lease', 1000);
    expect(claimed.map((r) => r.message_id).sort()).toEqual(['msg_due', 'msg_failed']);
  });
});

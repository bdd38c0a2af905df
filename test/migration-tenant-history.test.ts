import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmptyDb, migrateUpTo } from './helpers/migration-db.js';
import type { Db } from '../src/store/db.js';
import { migrate } from '../src/store/migrate.js';
import { listDeliveries, listMessages, type HistoryFilter } from '../src/outbox/history.js';
import { tenantScope } from '../src/scope.js';

/**
 * A store at migration 020 holding two tenants' history (a deleted endpoint, an extra destination's own
 * URL, every status), upgraded by migrate() to 021: a tenant's delivery list, now read per endpoint of
 * the tenant, lists exactly the deliveries of that tenant's messages, as the filter on the message did.
 */
describe('migration 021: a tenant history over rows written before it', () => {
  let store: { db: Db; close(): Promise<void> };
  let db: Db;

  beforeAll(async () => {
    store = await createEmptyDb();
    db = store.db;
    await migrateUpTo(db, 20);
    await db.exec(`
      INSERT INTO tenants (id, name) VALUES ('m_a', 'A'), ('m_b', 'B');
      INSERT INTO endpoints (id, tenant_id, url, timeout_ms, max_in_flight) VALUES
        ('ep_a1', 'm_a', 'http://127.0.0.1:9/a1', 5000, 2),
        ('ep_a2', 'm_a', 'http://127.0.0.1:9/a2', 5000, 2),
        ('ep_b1', 'm_b', 'http://127.0.0.1:9/b1', 5000, 2),
        ('ep_d1', 'default', 'http://127.0.0.1:9/d1', 5000, 2);
      INSERT INTO outbox_messages (id, tenant_id, event_type, payload)
        SELECT 'evt_' || lpad(i::text, 4, '0'), CASE i % 3 WHEN 0 THEN 'm_a' WHEN 1 THEN 'm_b' ELSE 'default' END,
               CASE WHEN i % 2 = 0 THEN 'invoice.paid' ELSE 'refund.created' END, '\\x7b7d'
        FROM generate_series(1, 30) AS i;
      -- Each message to its tenant's endpoints; each of A's also to ep_a1 at an invoice's callback URL.
      INSERT INTO outbox_deliveries (message_id, endpoint_id, url, status)
        SELECT m.id, e.id, NULL, (ARRAY['pending', 'sending', 'succeeded', 'failed', 'cancelled'])[1 + (row_number() OVER ()) % 5]
        FROM outbox_messages m JOIN endpoints e ON e.tenant_id = m.tenant_id ORDER BY m.id, e.id;
      INSERT INTO outbox_deliveries (message_id, endpoint_id, url, status)
        SELECT m.id, 'ep_a1', 'http://127.0.0.1:9/callback/' || m.id, 'succeeded' FROM outbox_messages m WHERE m.tenant_id = 'm_a';
      UPDATE endpoints SET deleted_at = now(), enabled = false WHERE id = 'ep_a2';
    `);
    await migrate(db);
  });

  afterAll(async () => {
    await store?.close();
  });

  /** Every delivery of the tenant's messages, newest first, as the rows were written (the old meaning). */
  async function expected(tenant: string, where = 'true'): Promise<number[]> {
    const { rows } = await db.query<{ id: string }>(
      `SELECT d.id FROM outbox_deliveries d JOIN outbox_messages m ON m.id = d.message_id WHERE m.tenant_id = $1 AND ${where} ORDER BY d.id DESC`,
      [tenant],
    );
    return rows.map((r) => Number(r.id));
  }

  /** Every page of a list, followed by its cursor. */
  async function allPages(tenantId: string, filter: HistoryFilter = {}): Promise<number[]> {
    const ids: number[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 100; pages++) {
      const page = await listDeliveries(db, tenantScope(tenantId), { ...filter, cursor, limit: 4 });
      ids.push(...page.items.map((d) => Number(d.id)));
      if (!page.next_cursor) return ids;
      cursor = page.next_cursor;
    }
    throw new Error('the cursor never ended');
  }

  it('lists every delivery of each tenant, a deleted endpoint’s and an extra destination’s included, page by page', async () => {
    const a = await expected('m_a');
    expect(a).toHaveLength(30);
    expect(await allPages('m_a')).toEqual(a);
    expect(await allPages('m_b')).toEqual(await expected('m_b'));
    expect(await allPages('default')).toEqual(await expected('default'));
    const page = await listDeliveries(db, tenantScope('m_a'), { limit: 50 });
    expect(page.items.filter((d) => d.endpoint_id === 'ep_a2')).toHaveLength(10);
    expect(page.items.filter((d) => d.url.startsWith('http://127.0.0.1:9/callback/'))).toHaveLength(10);
  });

  it('applies the status, type, endpoint and message filters within the tenant', async () => {
    for (const status of ['pending', 'sending', 'succeeded', 'failed', 'cancelled'] as const) {
      expect({ status, ids: await allPages('m_a', { status }) }).toEqual({ status, ids: await expected('m_a', `d.status = '${status}'`) });
    }
    expect(await allPages('m_a', { type: 'refund.created', status: 'succeeded' })).toEqual(
      await expected('m_a', `m.event_type = 'refund.created' AND d.status = 'succeeded'`),
    );
    expect(await allPages('m_a', { endpointId: 'ep_a2' })).toEqual(await expected('m_a', `d.endpoint_id = 'ep_a2'`));
    expect(await allPages('m_a', { endpointId: 'ep_b1' })).toEqual([]);
    expect(await allPages('m_a', { messageId: 'evt_0003' })).toEqual(await expected('m_a', `d.message_id = 'evt_0003'`));
    expect(await allPages('m_b', { messageId: 'evt_0003' })).toEqual([]);
  });

  it('lists no delivery for a tenant with no endpoint, or none at all', async () => {
    await db.exec(`INSERT INTO tenants (id) VALUES ('m_empty')`);
    expect(await allPages('m_empty')).toEqual([]);
    expect(await allPages('m_nobody')).toEqual([]);
  });

  it('lists each tenant’s messages newest first, with the type, status, endpoint and cursor filters', async () => {
    const page = await listMessages(db, tenantScope('m_a'), { limit: 50 });
    expect(page.items.map((m) => m.id)).toEqual(Array.from({ length: 10 }, (_, k) => `evt_${String(30 - 3 * k).padStart(4, '0')}`));
    const messages = async (where: string) =>
      (await db.query<{ id: string }>(`SELECT m.id FROM outbox_messages m WHERE m.tenant_id = 'm_a' AND ${where} ORDER BY m.id DESC`)).rows.map((r) => r.id);
    const ids = async (filter: HistoryFilter) => (await listMessages(db, tenantScope('m_a'), { limit: 50, ...filter })).items.map((m) => m.id);
    expect(await ids({ type: 'invoice.paid' })).toEqual(await messages(`m.event_type = 'invoice.paid'`));
    const failed = await messages(`EXISTS (SELECT 1 FROM outbox_deliveries d WHERE d.message_id = m.id AND d.status = 'failed')`);
    expect(failed.length).toBeGreaterThan(0);
    expect(await ids({ status: 'failed' })).toEqual(failed);
    expect(await ids({ endpointId: 'ep_a2' })).toEqual(await messages('true'));
    expect(await ids({ endpointId: 'ep_b1' })).toEqual([]);
    const first = await listMessages(db, tenantScope('m_a'), { limit: 4 });
    const second = await listMessages(db, tenantScope('m_a'), { limit: 4, cursor: first.next_cursor ?? undefined });
    expect([...first.items, ...second.items].map((m) => m.id)).toEqual((await messages('true')).slice(0, 8));
    expect(await listMessages(db, tenantScope('m_b'), { limit: 50 }).then((p) => p.items.every((m) => m.tenant_id === 'm_b'))).toBe(true);
  });
});

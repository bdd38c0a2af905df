import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publish } from '../src/outbox/publish.js';
import { createTestDb, type TestDb } from './helpers/db.js';

// publish(tx) runs tekil_outbox_publish, whose tenant and extra destination checks migration 024
// rewrote (one value compared at a time, so Postgres plans them once): the same refusals as before,
// the same rows written. Many calls on one connection, so the function's cached plans are the ones used.
describe('outbox: publishing checks its tenant and extra destinations', () => {
  let t: TestDb;
  const TENANTS = 40;
  const tenant = (i: number) => `m_${String(i).padStart(3, '0')}`;
  const endpoint = (i: number, e: number) => `ep_${tenant(i)}_${e}`;

  beforeAll(async () => {
    t = await createTestDb();
    const tenants = Array.from({ length: TENANTS }, (_, i) => tenant(i));
    await t.db.query('INSERT INTO tenants (id, name) SELECT x, x FROM unnest($1::text[]) AS x', [tenants]);
    // Two endpoints a tenant: one subscribed to invoices, one to payouts only.
    const ids = tenants.flatMap((_, i) => [endpoint(i, 0), endpoint(i, 1)]);
    const owners = tenants.flatMap((x) => [x, x]);
    const types = tenants.flatMap(() => ['invoice.*', 'payout.sent']);
    await t.db.query(
      `INSERT INTO endpoints (id, tenant_id, url, event_types, timeout_ms, max_in_flight)
       SELECT id, tenant_id, 'http://127.0.0.1:9/', ARRAY[event_type], 10000, 10 FROM unnest($1::text[], $2::text[], $3::text[]) AS x (id, tenant_id, event_type)`,
      [ids, owners, types],
    );
  });
  afterAll(async () => {
    await t?.close();
  });

  const counts = async () => {
    const { rows } = await t.db.query<{ messages: number; deliveries: number; queued: number }>(
      `SELECT (SELECT count(*) FROM outbox_messages)::int AS messages, (SELECT count(*) FROM outbox_deliveries)::int AS deliveries,
              (SELECT count(*) FROM outbox_queue)::int AS queued`,
    );
    return rows[0]!;
  };

  it("fans every message out to its own tenant's subscribed endpoints, call after call", async () => {
    const before = await counts();
    const published = await t.db.transaction(async (tx) => {
      const results = [];
      for (let i = 0; i < 3 * TENANTS; i++) {
        results.push({ tenant: i % TENANTS, result: await publish(tx, { tenantId: tenant(i % TENANTS), type: 'invoice.paid', resourceId: `inv_${i}` }) });
      }
      return results;
    });
    for (const { tenant: i, result } of published) {
      expect(result.deliveries).toBe(1);
      const { rows } = await t.db.query<{ endpoint_id: string }>('SELECT endpoint_id FROM outbox_deliveries WHERE message_id = $1', [result.id]);
      expect(rows.map((r) => r.endpoint_id)).toEqual([endpoint(i, 0)]);
    }
    const after = await counts();
    expect(after.messages - before.messages).toBe(3 * TENANTS);
    expect(after.queued - before.queued).toBe(3 * TENANTS);
  });

  it('refuses a tenant that does not exist or is being deleted, after many calls that passed, and writes nothing', async () => {
    const before = await counts();
    await t.db.query("INSERT INTO tenants (id, name, deleted_at) VALUES ('m_leaving', 'leaving', now())");
    for (const missing of ['m_none', 'm_leaving']) {
      const refused = t.db.transaction(async (tx) => {
        for (let i = 0; i < 10; i++) await publish(tx, { tenantId: tenant(i), type: 'invoice.paid' });
        await publish(tx, { tenantId: missing, type: 'invoice.paid' });
      });
      await expect(refused).rejects.toMatchObject({ code: 'TENANT_NOT_FOUND', message: expect.stringContaining(`no tenant ${missing}`) });
    }
    expect(await counts()).toEqual(before);
  });

  it("takes the tenant's own endpoints as extra destinations and refuses another tenant's, wherever it stands in the list", async () => {
    const own = await t.db.transaction((tx) =>
      publish(tx, {
        tenantId: tenant(1),
        type: 'invoice.paid',
        extraDestinations: [
          { url: 'http://127.0.0.1:9/callback-1', endpointId: endpoint(1, 0) },
          { url: 'http://127.0.0.1:9/callback-2', endpointId: endpoint(1, 1) },
        ],
      }),
    );
    expect(own.deliveries).toBe(3);
    const before = await counts();
    for (const extras of [
      [{ url: 'http://127.0.0.1:9/x', endpointId: endpoint(2, 0) }],
      [
        { url: 'http://127.0.0.1:9/x', endpointId: endpoint(1, 0) },
        { url: 'http://127.0.0.1:9/y', endpointId: endpoint(2, 1) },
      ],
      [{ url: 'http://127.0.0.1:9/z', endpointId: 'ep_none' }],
    ]) {
      const refused = t.db.transaction((tx) => publish(tx, { tenantId: tenant(1), type: 'invoice.paid', extraDestinations: extras }));
      await expect(refused).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    }
    expect(await counts()).toEqual(before);
  });
});

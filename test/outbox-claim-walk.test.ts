import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publish } from '../src/outbox/publish.js';
import { claimDeliveriesAfter, type ClaimOptions } from '../src/store/sql/outbox/claim-deliveries.js';
import { releaseUnstarted } from '../src/store/sql/outbox/release-unstarted.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { outboxHarness, type OutboxHarness } from './helpers/outbox.js';

/**
 * The claim walks the tenants that have queued rows (a loose index scan of the due index, tenant first),
 * from after the last tenant it claimed from, wrapping around; inside a tenant it walks the endpoints from
 * after the one it last claimed from there. Each tenant takes at most its quantum (times its weight) and
 * its free requests in flight (sending.tenant_max_in_flight, or the tenant's own max_in_flight).
 */
describe('outbox claim: round the tenants, then round the endpoints inside each', () => {
  let t: TestDb;
  let h: OutboxHarness;
  let seq = 0;
  const claim = (options: Partial<ClaimOptions> & { limit: number; after: string }) =>
    claimDeliveriesAfter(t.db, { lease: `walk:${++seq}`, leaseMarginMs: 60_000, breakerFailures: 0, ...options });
  const endpointsOf = (rows: { endpoint_id: string }[]) => [...new Set(rows.map((r) => r.endpoint_id))];
  const countBy = (rows: { tenant_id: string }[]) => {
    const out: Record<string, number> = {};
    for (const r of rows) out[r.tenant_id] = (out[r.tenant_id] ?? 0) + 1;
    return out;
  };

  beforeAll(async () => {
    t = await createTestDb();
    h = outboxHarness(t.db);
  });
  afterAll(async () => {
    await t?.close();
  });

  it("serves a tenant's endpoints in turn from where its last claim ended, wrapping around", async () => {
    await t.db.query("INSERT INTO tenants (id, name) VALUES ('walk_a', 'a')");
    for (let i = 0; i < 3; i++) await h.endpoints.create(t.db, { url: `http://127.0.0.1:9/${i}`, tenant_id: 'walk_a' });
    const ids = (await t.db.query<{ id: string }>("SELECT id FROM endpoints WHERE tenant_id = 'walk_a' ORDER BY id")).rows.map((r) => r.id);
    for (let m = 0; m < 4; m++) await t.db.transaction((tx) => publish(tx, { tenantId: 'walk_a', type: 'invoice.paid', data: { m } }));
    const cursors = new Map<string, string>();
    const step = async (limit: number) => {
      const c = await claim({ limit, after: '', cursors });
      for (const r of c.rows) cursors.set(r.tenant_id, r.endpoint_id);
      return c;
    };
    const first = await step(2);
    expect(endpointsOf(first.rows)).toEqual([ids[0]]);
    expect(first.nextAfter).toBe('walk_a');
    expect(endpointsOf((await step(2)).rows)).toEqual([ids[1]]);
    expect(endpointsOf((await step(2)).rows)).toEqual([ids[2]]);
    // Past the tenant's last endpoint, its walk starts again at its first: its other two deliveries.
    expect(endpointsOf((await step(2)).rows)).toEqual([ids[0]]);
    const fifth = await step(10);
    expect(endpointsOf(fifth.rows).sort()).toEqual([ids[1], ids[2]].sort());
    expect(fifth.rows).toHaveLength(4);
    // Every delivery is leased now: nothing to claim, and the cursor still comes back.
    const sixth = await step(10);
    expect(sixth.rows).toEqual([]);
    expect(sixth.nextAfter).toBe('walk_a');
  });

  it('shares each claim between tenants by weight, whatever their backlogs and numbers of endpoints', async () => {
    await t.db.query("INSERT INTO tenants (id, name, weight) VALUES ('share_big', 'big', 1), ('share_quiet', 'quiet', 1), ('share_plan', 'plan', 2)");
    for (let i = 0; i < 10; i++) await h.endpoints.create(t.db, { url: `http://127.0.0.1:9/big${i}`, tenant_id: 'share_big', event_types: ['share.x'] });
    await h.endpoints.create(t.db, { url: 'http://127.0.0.1:9/quiet', tenant_id: 'share_quiet', event_types: ['share.x'] });
    await h.endpoints.create(t.db, { url: 'http://127.0.0.1:9/plan', tenant_id: 'share_plan', event_types: ['share.x'], max_in_flight: 100 });
    for (let m = 0; m < 20; m++) await t.db.transaction((tx) => publish(tx, { tenantId: 'share_big', type: 'share.x', data: { m } }));
    for (let m = 0; m < 3; m++) await t.db.transaction((tx) => publish(tx, { tenantId: 'share_quiet', type: 'share.x', data: { m } }));
    for (let m = 0; m < 40; m++) await t.db.transaction((tx) => publish(tx, { tenantId: 'share_plan', type: 'share.x', data: { m } }));
    // The big tenant comes first in the walk's order and has 200 due rows over 10 endpoints: it still
    // takes one quantum (5), the quiet tenant its 3, and the tenant of weight 2 two quanta (10).
    const c = await claim({ limit: 100, after: 'share', quantum: 5 });
    expect(countBy(c.rows)).toEqual({ share_big: 5, share_quiet: 3, share_plan: 10 });
    expect(c.nextAfter).toBe('share_quiet');
  });

  it('holds a tenant to its cap on requests in flight until its requests finish or are given back', async () => {
    await t.db.query("INSERT INTO tenants (id, name, max_in_flight) VALUES ('cap_own', 'own', 3), ('cap_file', 'file', NULL)");
    await h.endpoints.create(t.db, { url: 'http://127.0.0.1:9/own', tenant_id: 'cap_own', event_types: ['cap.x'] });
    await h.endpoints.create(t.db, { url: 'http://127.0.0.1:9/file', tenant_id: 'cap_file', event_types: ['cap.x'] });
    for (let m = 0; m < 10; m++) {
      await t.db.transaction((tx) => publish(tx, { tenantId: 'cap_own', type: 'cap.x', data: { m } }));
      await t.db.transaction((tx) => publish(tx, { tenantId: 'cap_file', type: 'cap.x', data: { m } }));
    }
    const capped = (rows: { tenant_id: string }[]) => rows.filter((r) => r.tenant_id.startsWith('cap_'));
    const first = await claim({ limit: 100, after: 'cap', tenantCap: 4 });
    expect(countBy(capped(first.rows))).toEqual({ cap_own: 3, cap_file: 4 });
    // Both at their caps: nothing more, however often a claim asks.
    expect(capped((await claim({ limit: 100, after: 'cap', tenantCap: 4 })).rows)).toEqual([]);
    // Two of the own-capped tenant's requests are given back: two more may start.
    const own = first.rows.filter((r) => r.tenant_id === 'cap_own').slice(0, 2);
    await releaseUnstarted(
      t.db,
      own.map((r) => ({ tenantId: r.tenant_id, id: r.id, lease: `walk:${seq - 1}` })),
    );
    const third = await claim({ limit: 100, after: 'cap', tenantCap: 4 });
    expect(countBy(capped(third.rows))).toEqual({ cap_own: 2 });
  });
});

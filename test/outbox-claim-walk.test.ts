import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publish } from '../src/outbox/publish.js';
import { claimDeliveriesAfter } from '../src/store/sql/outbox/claim-deliveries.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { outboxHarness, type OutboxHarness } from './helpers/outbox.js';

/**
 * The claim walks the endpoints that have queued rows (a loose index scan of the due index), from after
 * the last endpoint it claimed from, wrapping around: a round robin, so the first endpoint's backlog
 * does not keep the others waiting, and endpoints with nothing queued are not read.
 */
describe('outbox claim: a round robin over the endpoints with due rows', () => {
  let t: TestDb;
  let h: OutboxHarness;
  let ids: string[];
  let seq = 0;
  const claim = (limit: number, after: string) =>
    claimDeliveriesAfter(t.db, { limit, lease: `walk:${++seq}`, leaseMarginMs: 60_000, breakerFailures: 0, after });

  beforeAll(async () => {
    t = await createTestDb();
    h = outboxHarness(t.db);
    for (let i = 0; i < 3; i++) await h.endpoints.create(t.db, { url: `http://127.0.0.1:9/${i}` });
    // An endpoint without deliveries: it subscribes to nothing published here.
    await h.endpoints.create(t.db, { url: 'http://127.0.0.1:9/idle', event_types: ['other.type'] });
    // The walk's order is the due index's: the ids in the database's order.
    ids = (
      await t.db.query<{ id: string }>("SELECT id FROM endpoints WHERE NOT ('other.type' = ANY (event_types)) AND tenant_id = 'default' ORDER BY id")
    ).rows.map((r) => r.id);
    expect(ids).toHaveLength(3);
    for (let m = 0; m < 4; m++) await t.db.transaction((tx) => publish(tx, { type: 'invoice.paid', data: { m } }));
  });
  afterAll(async () => {
    await t?.close();
  });

  it('serves each endpoint in turn from where the last claim ended, wrapping around, and says where to go on when nothing is left', async () => {
    const endpointsOf = (rows: { endpoint_id: string }[]) => [...new Set(rows.map((r) => r.endpoint_id))];

    const first = await claim(2, '');
    expect(endpointsOf(first.rows)).toEqual([ids[0]]);
    expect(first.rows).toHaveLength(2);
    expect(first.nextAfter).toBe(ids[0]);

    const second = await claim(2, first.nextAfter);
    expect(endpointsOf(second.rows)).toEqual([ids[1]]);
    expect(second.nextAfter).toBe(ids[1]);

    const third = await claim(2, second.nextAfter);
    expect(endpointsOf(third.rows)).toEqual([ids[2]]);
    expect(third.nextAfter).toBe(ids[2]);

    // Past the last endpoint, the walk starts again at the first: its other two deliveries.
    const fourth = await claim(2, third.nextAfter);
    expect(endpointsOf(fourth.rows)).toEqual([ids[0]]);
    expect(fourth.nextAfter).toBe(ids[0]);

    // A bigger claim takes from several endpoints, in the walk's order, the rest of each.
    const fifth = await claim(10, fourth.nextAfter);
    expect(endpointsOf(fifth.rows).sort()).toEqual([ids[1], ids[2]].sort());
    expect(fifth.rows).toHaveLength(4);
    expect(fifth.nextAfter).toBe(ids[2]);

    // Every delivery is leased now: nothing to claim, and the cursor still comes back.
    const sixth = await claim(10, fifth.nextAfter);
    expect(sixth.rows).toEqual([]);
    expect(ids).toContain(sixth.nextAfter);
    const { rows } = await t.db.query<{ n: number }>("SELECT count(*)::int AS n FROM outbox_deliveries WHERE status = 'sending' AND attempts = 1");
    expect(rows[0]!.n).toBe(12);
  });
});

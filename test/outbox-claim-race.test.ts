import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publish } from '../src/outbox/publish.js';
import { claimDeliveries } from '../src/store/sql/outbox/claim-deliveries.js';
import { createTestDb, onPostgres, type TestDb } from './helpers/db.js';
import { outboxHarness } from './helpers/outbox.js';

/**
 * Concurrent claims on one endpoint, none completed: every lease is live for the whole test, so no
 * delivery may be claimed twice. A claim whose snapshot predates another claimer's commit reads the
 * queue as it was (its rows unleased); the record it then locks must be checked again, on its latest
 * version, for a live lease.
 */
describe.skipIf(!onPostgres)('outbox: concurrent claims', () => {
  let t: TestDb;

  beforeAll(async () => {
    t = await createTestDb({ poolSize: 8 });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('never hand one delivery to two claimers while its lease is live', async () => {
    const h = outboxHarness(t.db, {});
    // Three endpoints with room for every delivery in flight: each message makes one delivery per endpoint.
    for (let e = 0; e < 3; e++) await h.endpoints.create(t.db, { url: 'http://127.0.0.1:9/hook', event_types: ['race.*'], max_in_flight: 1000 });
    const messages = 900;
    const total = 3 * messages;
    await t.db.transaction(async (tx) => {
      for (let i = 0; i < messages; i++) await publish(tx, { type: 'race.event', data: { i } });
    });
    const claimers = 4;
    const pools = Array.from({ length: claimers }, (_, i) => t.db.openPool({ applicationName: `tekil-test-claimer-${i}`, max: 1 }));
    const claimed: string[] = [];
    try {
      await Promise.all(
        pools.map(async (pool, i) => {
          for (let n = 0; ; n++) {
            const rows = await claimDeliveries(pool, 7, `claimer-${i}:${n}`, 60_000);
            for (const r of rows) claimed.push(String(r.id));
            if (rows.length === 0) {
              const { rows: left } = await t.db.query<{ n: number }>("SELECT count(*)::int AS n FROM outbox_deliveries WHERE status = 'pending'");
              if (left[0]!.n === 0) return;
            }
          }
        }),
      );
    } finally {
      await Promise.all(pools.map((p) => p.close()));
    }
    expect(new Set(claimed).size).toBe(total);
    expect(claimed).toHaveLength(total);
  });
});

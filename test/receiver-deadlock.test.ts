import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { createTestDb, onPostgres, type TestDb } from './helpers/db.js';
import { countRows, paymosBody, receiverConfig, signPaymos, testContext } from './helpers/receiver.js';
import { waitUntil } from './helpers/wait.js';
import { buildApp } from '../src/app.js';
import { createInboxBatcher, type InboxBatcher } from '../src/receiver/batcher.js';
import { createPostgresDb } from '../src/store/postgres.js';
import type { Db } from '../src/store/db.js';

/**
 * Two receiver processes (two apps, each with its own batcher and pool) on one Postgres, sent the
 * same event ids in opposite orders. Both batches are held at a table lock the test owns and released
 * together, so they insert side by side: without a fixed insert order they deadlock and one whole
 * batch is answered 503.
 */
describe.skipIf(!onPostgres)('two receivers racing on the same ids', () => {
  let t: TestDb;
  const pools: Db[] = [];
  const apps: FastifyInstance[] = [];
  const batchers: InboxBatcher[] = [];

  beforeAll(async () => {
    t = await createTestDb();
    for (let i = 0; i < 2; i++) {
      const db = createPostgresDb({ connectionString: t.url!, max: 2, applicationName: `tekil-race-${i}` });
      // One INSERT per receiver per round, so the two batches cover the same ids.
      const ctx = testContext(db, receiverConfig({ receiver: { batch_max_rows: 5000 } }));
      const batcher = createInboxBatcher(ctx);
      await batcher.start();
      pools.push(db);
      batchers.push(batcher);
      apps.push(await buildApp({ ctx, roles: new Set(['receiver']), batcher }));
    }
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
    for (const b of batchers) await b.stop();
    for (const db of pools) await db.close();
    await t?.close();
  });

  it('answers every request 2xx and stores one row per id, rounds after round', async () => {
    const perRound = 2000;
    const lock = new pg.Client({ connectionString: t.url });
    await lock.connect();
    try {
      for (let round = 0; round < 3; round++) {
        const ids = Array.from({ length: perRound }, (_, i) => `evt_r${round}_${String(i).padStart(5, '0')}`);
        const send = (app: FastifyInstance, id: string) => {
          const body = paymosBody(id);
          // inject() is lazy until awaited: then() sends it now.
          return app.inject({ method: 'POST', url: '/in/shop', payload: body, headers: signPaymos(body) }).then((r) => r);
        };
        // Hold both receivers' inserts at the table until each has its whole batch queued behind.
        await lock.query('BEGIN');
        await lock.query('LOCK TABLE inbox_deliveries IN SHARE MODE');
        const gates = [send(apps[0]!, `gate_a${round}`), send(apps[1]!, `gate_b${round}`)];
        await waitUntil(
          async () => {
            // Asked on another connection: inside the lock's transaction pg_stat_activity is a snapshot.
            const { rows } = await t.db.query<{ n: number }>(
              "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name LIKE 'tekil-race-%' AND wait_event_type = 'Lock'",
            );
            return rows[0]!.n === 2;
          },
          10_000,
          'both gate inserts waiting on the table lock',
        );
        const answers = [...ids.map((id) => send(apps[0]!, id)), ...[...ids].reverse().map((id) => send(apps[1]!, id))];
        await waitUntil(() => batchers[0]!.queued === perRound && batchers[1]!.queued === perRound, 10_000, 'both batches queued');
        await lock.query('COMMIT');

        const results = await Promise.all([...gates, ...answers]);
        const statuses = results.map((r) => r.statusCode);
        expect(statuses.filter((s) => s !== 200).length, 'answers other than 200').toBe(0);
        const accepted = results.slice(2).filter((r) => r.json<{ status: string }>().status === 'accepted');
        expect(accepted).toHaveLength(perRound);
      }
      expect(await countRows(t.db)).toBe(3 * (2000 + 2));
    } finally {
      await lock.end();
    }
  });
});

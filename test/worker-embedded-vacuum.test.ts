import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, onPostgres, type TestDb } from './helpers/db.js';
import { waitUntil } from './helpers/wait.js';
import { SOURCE, testContext, workerTestConfig } from './helpers/inbox.js';
import { defineHandlers } from '../src/worker/handlers.js';
import { createInboxWorker } from '../src/worker/worker.js';

// PGlite runs no autovacuum: without the worker's own VACUUM, the queue keeps every deleted row's space.
describe.skipIf(onPostgres)('worker on the embedded store: the queue is vacuumed', () => {
  let t: TestDb;
  beforeAll(async () => {
    t = await createTestDb();
  });
  afterAll(async () => t?.close());

  const queueBytes = async () => (await t.db.query<{ bytes: number }>("SELECT pg_relation_size('inbox_queue')::int AS bytes")).rows[0]!.bytes;

  /** Queues 2,000 deliveries, runs a worker until they are done, then `check` while it still runs. */
  async function processMany(prefix: string, embeddedVacuumEvery: number, check: () => Promise<void>): Promise<void> {
    await t.db.query(`INSERT INTO inbox_deliveries (source, event_id, body) SELECT $1, $2 || i, '\\x7b7d' FROM generate_series(1, 2000) AS i`, [
      SOURCE,
      prefix,
    ]);
    const worker = createInboxWorker(testContext(t.db, workerTestConfig()), { handlers: defineHandlers().on(SOURCE, '*', () => {}), embeddedVacuumEvery });
    await worker.start();
    try {
      await waitUntil(async () => {
        const { rows } = await t.db.query<{ n: number }>("SELECT count(*)::int AS n FROM inbox_deliveries WHERE status = 'done' AND event_id LIKE $1", [
          `${prefix}%`,
        ]);
        return rows[0]!.n === 2000;
      }, 30_000);
      await check();
    } finally {
      await worker.stop();
    }
  }

  it('gives the space of settled deliveries back once the queue drains', async () => {
    // Never vacuumed: 2,000 deleted queue rows keep their pages.
    await processMany('evt_kept_', Number.POSITIVE_INFINITY, async () => expect(await queueBytes()).toBeGreaterThan(100_000));
    // Vacuumed after every 500 claimed, when a batch finds the queue drained (just after the last
    // delivery settles): the empty pages are given back.
    await processMany('evt_vacuumed_', 500, () => waitUntil(async () => (await queueBytes()) === 0, 10_000, 'the queue to be vacuumed'));
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, onPostgres, type TestDb } from './helpers/db.js';
import pg from 'pg';
import { SOURCE, testContext, waitForLockWait, workerTestConfig } from './helpers/inbox.js';
import { defineHandlers } from '../src/worker/handlers.js';
import { createInboxWorker } from '../src/worker/worker.js';

/** The advisory lock that holds race_later's claim open until the test lets it commit. */
const CLAIM_GATE = 7302;

// Needs two batches on two connections at once: server Postgres only.
describe.skipIf(!onPostgres)('worker: one delivery per resource at a time, also without ordering', () => {
  let t: TestDb;
  const source = 'unordered';

  beforeAll(async () => {
    t = await createTestDb({ poolSize: 8 });
    // Holds the race window open: the claim of race_later waits for an advisory lock the test holds,
    // after it has locked the row and before it commits, which is exactly when another claimer still
    // reads that row as unclaimed.
    await t.db.exec(`
      CREATE FUNCTION slow_claim() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.event_id = 'race_later' AND NEW.locked_by IS NOT NULL AND OLD.locked_by IS NULL THEN
          PERFORM pg_advisory_lock(${CLAIM_GATE});
          PERFORM pg_advisory_unlock(${CLAIM_GATE});
        END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER slow_claim BEFORE UPDATE ON inbox_queue FOR EACH ROW EXECUTE FUNCTION slow_claim();`);
  });
  afterAll(async () => t?.close());

  it('an earlier event claimed while a later one of its resource is being claimed waits for it', async () => {
    const cfg = workerTestConfig({ worker: { batch_size: 10, concurrency: 1, lease: '10s', poll_interval: '1s' } });
    cfg.sources[source] = { ...cfg.sources[SOURCE]!, ordering: undefined };
    let inFlight = 0;
    let overlaps = 0;
    let earlierStarted!: () => void;
    const earlierRunning = new Promise<void>((resolve) => (earlierStarted = resolve));
    let finishEarlier!: () => void;
    const earlierMayFinish = new Promise<void>((resolve) => (finishEarlier = resolve));
    const handlers = defineHandlers().on(source, '*', async (event) => {
      if (++inFlight > 1) overlaps++;
      if (event.eventId === 'race_earlier') {
        earlierStarted();
        await earlierMayFinish;
      }
      inFlight--;
    });
    const first = createInboxWorker(testContext(t.db, cfg), { handlers, workerId: 'first' });
    const second = createInboxWorker(testContext(t.db, cfg), { handlers, workerId: 'second' });
    const insert = (eventId: string, minutesAgo: number) =>
      t.db.query(
        `INSERT INTO inbox_deliveries (source, event_id, resource_id, event_type, occurred_at, body)
         VALUES ($1, $2, 'inv_race', 'x', now() - $3 * interval '1 minute', '\\x7b7d')`,
        [source, eventId, minutesAgo],
      );

    await insert('race_later', 1);
    const gate = new pg.Client({ connectionString: t.url });
    await gate.connect();
    try {
      await gate.query('SELECT pg_advisory_lock($1)', [CLAIM_GATE]);
      const firstBatch = first.runOnce(); // claims race_later, and waits at the gate before committing
      await waitForLockWait(t.db, 'advisory', 'the first claim at the gate');
      // The earlier event arrives while race_later's claim is not yet committed: the second claimer
      // sees race_later as pending and later, so nothing holds race_earlier back.
      await insert('race_earlier', 2);
      const secondBatch = second.runOnce();
      await earlierRunning;
      // The first claim commits while race_earlier is being handled; its batch must then wait for
      // the resource lock the second batch holds.
      await gate.query('SELECT pg_advisory_unlock($1)', [CLAIM_GATE]);
      await waitForLockWait(t.db, 'advisory', 'the first batch waiting for the resource');
      finishEarlier();
      expect(await Promise.all([firstBatch, secondBatch])).toEqual([1, 1]);
    } finally {
      finishEarlier();
      await gate.end();
    }

    expect(overlaps).toBe(0);
    const attempts = await t.db.query<{ event_id: string; worker: string; started_at: Date; finished_at: Date; outcome: string }>(
      `SELECT event_id, worker, started_at, finished_at, outcome FROM inbox_attempts WHERE source = $1 ORDER BY started_at`,
      [source],
    );
    // Both claims happened (the race did occur), each by its own worker, and both succeeded ...
    expect(attempts.rows.map((a) => [a.event_id, a.worker, a.outcome])).toEqual([
      ['race_earlier', 'second', 'done'],
      ['race_later', 'first', 'done'],
    ]);
    // ... one after the other: the later one started only once the earlier one's batch had finished.
    expect(attempts.rows[1]!.started_at.getTime()).toBeGreaterThanOrEqual(attempts.rows[0]!.finished_at.getTime());
    const done = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM inbox_deliveries WHERE source = $1 AND status = 'done'`, [source]);
    expect(done.rows[0]!.n).toBe(2);
  });
});

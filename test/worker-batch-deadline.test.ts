import { claimStatement } from '../src/store/sql/inbox/claim-due-deliveries.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestDb, type TestDb } from './helpers/db.js';
import { testContext, workerTestConfig } from './helpers/inbox.js';
import { waitUntil } from './helpers/wait.js';
import { startSink, type Sink, type SinkAnswer } from './helpers/sink.js';
import type { TekilConfig } from '../src/config/index.js';
import type { Db, QueryOptions } from '../src/store/db.js';
import { defineHandlers } from '../src/worker/handlers.js';
import { createInboxWorker } from '../src/worker/worker.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

/**
 * The store as the worker sees it, noting when each batch sends its claim. A batch computes its
 * deadline (half its lease) just before it sends the claim, so "claim sent + half the lease" is never
 * earlier than that deadline: a delivery held until Date.now() is past it ends after the deadline, on
 * however loaded a machine, and the batch must start nothing more.
 */
const CLAIM_TEXT_START = claimStatement(10).text.slice(0, 60);

function notingClaims(db: Db): { db: Db; sinceClaim: (ms: number) => Promise<void> } {
  let claimSentAt: number | undefined;
  const noted: Db = {
    kind: db.kind,
    query: <R>(sql: string, params?: readonly unknown[], options?: QueryOptions) => {
      // The claim is planned on every run (sent unnamed): known by its text.
      if (sql.startsWith(CLAIM_TEXT_START)) claimSentAt = Date.now();
      return db.query<R>(sql, params, options);
    },
    exec: (sql) => db.exec(sql),
    transaction: (fn) => db.transaction(fn),
    openPool: (options) => db.openPool(options),
    listen: (channel, onNotify) => db.listen(channel, onNotify),
    close: () => db.close(),
  };
  /** Resolves once `ms` have passed since the batch sent its claim (with `ms` half the lease: its deadline has passed). */
  const sinceClaim = (ms: number) => waitUntil(() => claimSentAt !== undefined && Date.now() > claimSentAt + ms, 10_000, `${ms} ms since the batch's claim`);
  return { db: noted, sinceClaim };
}

/**
 * A batch slower than its lease would lose its deliveries to another worker and roll back. A batch
 * therefore starts nothing once half its lease has passed: the rest go back to the queue unstarted.
 */
describe('worker: a batch stops starting deliveries at half its lease', () => {
  let t: TestDb;
  let sink: Sink;
  let answer: () => SinkAnswer;
  const seen = () => sink.requests.map((r) => String(r.headers['x-tekil-event-id']));

  beforeAll(async () => {
    t = await createTestDb();
    sink = await startSink(() => answer());
  });
  afterAll(async () => {
    await sink?.close();
    await t?.close();
  });
  beforeEach(() => {
    sink.requests.length = 0;
  });

  /** One-at-a-time forwarding; the batch's deadline is half the lease after its claim began. */
  function forwardConfig(source: string, timeout: number, lease: string): TekilConfig {
    const config = workerTestConfig({ worker: { batch_size: 10, concurrency: 1, lease, poll_interval: '20ms', forward_concurrency: 1 } });
    config.sources[source] = {
      ...config.sources['shop-paymos']!,
      ordering: undefined,
      retry: { max_attempts: 5, base: 60_000, cap: 60_000 },
      forward: { url: sink.url, timeout, secret: SECRET, max_in_flight: 64 },
    };
    return config;
  }

  async function insertEvents(source: string, n: number): Promise<void> {
    for (let i = 0; i < n; i++) {
      await t.db.query(
        `INSERT INTO inbox_deliveries (source, event_id, resource_id, event_type, body, content_type)
         VALUES ($1, $2, $3, 'invoice.paid', '\\x7b7d', 'application/json')`,
        [source, `${source}_${i}`, `inv_${source}_${i}`],
      );
    }
  }

  async function counts(source: string) {
    const res = await t.db.query<{ done: number; pending: number; history: number; leased: number; queued_attempts: number }>(
      `SELECT (SELECT count(*)::int FROM inbox_deliveries WHERE source = $1 AND status = 'done') AS done,
              (SELECT count(*)::int FROM inbox_deliveries WHERE source = $1 AND status = 'pending') AS pending,
              (SELECT count(*)::int FROM inbox_attempt_history WHERE source = $1) AS history,
              (SELECT count(*)::int FROM inbox_queue WHERE source = $1 AND locked_by IS NOT NULL) AS leased,
              (SELECT coalesce(sum(attempts), 0)::int FROM inbox_queue WHERE source = $1) AS queued_attempts`,
      [source],
    );
    return res.rows[0]!;
  }

  it('slow forwards: the unstarted ones return to the queue without an attempt; each is forwarded once', async () => {
    const source = 'slowfwd';
    const claims = notingClaims(t.db);
    const metrics = testContext(claims.db, forwardConfig(source, 2_000, '2s'));
    const worker = createInboxWorker(metrics);
    await insertEvents(source, 10);

    // The batch's deadline is 1 s (half the lease) after it starts. The application answers the first
    // two forwards at once and the third only once that deadline has passed: the fourth must not start.
    answer = () => (sink.requests.length === 3 ? { status: 204, after: claims.sinceClaim(1_000) } : { status: 204 });
    expect(await worker.runOnce()).toBe(10);
    const first = await counts(source);
    expect(first.done).toBe(3);
    expect(first).toMatchObject({ pending: 10 - first.done, history: 0, leased: 0, queued_attempts: 0 });
    expect(seen()).toHaveLength(first.done);
    const released = await metrics.metrics.getSingleMetric('tekil_worker_released_total')?.get();
    expect(released?.values[0]?.value).toBe(10 - first.done);

    // The released ones are due at once; every event reaches the application exactly once.
    for (let i = 0; i < 10 && (await counts(source)).done < 10; i++) await worker.runOnce();
    expect((await counts(source)).done).toBe(10);
    expect(seen().sort()).toEqual(Array.from({ length: 10 }, (_, i) => `${source}_${i}`).sort());
    const batchErrors = await metrics.metrics.getSingleMetric('tekil_worker_batch_errors_total')?.get();
    expect(batchErrors?.values[0]?.value ?? 0).toBe(0);
  });

  it('an application that times out: the started attempts are recorded as retries, not lost with the batch', async () => {
    const source = 'deadapp';
    answer = () => ({ hang: true }); // every forward ends at its 300 ms timeout
    const worker = createInboxWorker(testContext(t.db, forwardConfig(source, 300, '1s')));
    await insertEvents(source, 10);

    expect(await worker.runOnce()).toBe(10);
    const after = await counts(source);
    // Two forwards fit before the deadline (started at about 0 and 300 ms); both timed out.
    expect(after.history).toBeGreaterThanOrEqual(1);
    expect(after.history).toBeLessThanOrEqual(3);
    expect(after).toMatchObject({ done: 0, pending: 10, leased: 0, queued_attempts: after.history });
    const outcomes = await t.db.query<{ outcome: string; error: string }>('SELECT outcome, error FROM inbox_attempts WHERE source = $1', [source]);
    expect(outcomes.rows.every((r) => r.outcome === 'retry' && r.error === 'forward: no answer within 300 ms')).toBe(true);
  });

  it('slow in-process handlers: the same deadline applies between handlers', async () => {
    const source = 'slowhandler';
    const config = workerTestConfig({ worker: { batch_size: 10, concurrency: 1, lease: '2s', poll_interval: '20ms' } });
    config.sources[source] = { ...config.sources['shop-paymos']!, ordering: undefined };
    const ran: string[] = [];
    // The batch's deadline is 1 s (half the lease) after its claim. The second handler runs until
    // 0.6 s after that claim, the third until past the deadline (each within its own 1 s timeout): the
    // batch must then start none of the other seven. Both are timed from the claim the worker was seen
    // to send, not from a moment before runOnce(): on a loaded machine the claim can come much later.
    const claims = notingClaims(t.db);
    const handlers = defineHandlers().on(source, '*', async (event) => {
      ran.push(event.eventId);
      if (ran.length === 2) await claims.sinceClaim(600);
      else if (ran.length === 3) await claims.sinceClaim(1_000);
    });
    const worker = createInboxWorker(testContext(claims.db, config), { handlers });
    await insertEvents(source, 10);
    // The earlier tests' retries (full jitter: possibly due at once) must not share this batch.
    await t.db.query("UPDATE inbox_queue SET next_attempt_at = now() + interval '1 hour' WHERE source <> $1", [source]);

    expect(await worker.runOnce()).toBe(10);
    const first = await counts(source);
    expect(first.done).toBe(3);
    expect(first).toMatchObject({ pending: 10 - first.done, history: 0, leased: 0, queued_attempts: 0 });
    for (let i = 0; i < 10 && (await counts(source)).done < 10; i++) await worker.runOnce();
    expect((await counts(source)).done).toBe(10);
    expect(ran).toHaveLength(10);
    expect(new Set(ran).size).toBe(10);
  });
});

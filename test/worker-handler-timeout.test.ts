import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, onPostgres, type TestDb } from './helpers/db.js';
import { deliveryRow, insertInvoiceDelivery, SOURCE, testContext, workerTestConfig } from './helpers/inbox.js';
import { waitUntil } from './helpers/wait.js';
import { defineHandlers } from '../src/worker/handlers.js';
import { createInboxWorker } from '../src/worker/worker.js';

/**
 * A handler that never answers must not hold its batch (its transaction, its locks, its neighbours):
 * after `worker.handler_timeout` the attempt fails as transient, and whatever it wrote is undone.
 */
describe('worker: handler timeout', () => {
  let t: TestDb;

  beforeAll(async () => {
    t = await createTestDb();
    await t.db.exec('CREATE TABLE timeout_effects (event_id text NOT NULL, step text NOT NULL)');
  });
  afterAll(async () => t?.close());

  const effects = async (eventId: string) =>
    (await t.db.query<{ step: string }>('SELECT step FROM timeout_effects WHERE event_id = $1 ORDER BY step', [eventId])).rows.map((r) => r.step);

  it('a handler that never resolves fails as transient, its writes roll back, and the batch moves on', async () => {
    const config = workerTestConfig({ worker: { batch_size: 10, concurrency: 1, lease: '10s', poll_interval: '1s', handler_timeout: '300ms' } });
    let releaseHung!: () => void;
    const hungGate = new Promise<void>((resolve) => (releaseHung = resolve));
    let lateWrite: Promise<unknown> | undefined;
    const handlers = defineHandlers().on(SOURCE, '*', async (event, ctx) => {
      await ctx.tx.query("INSERT INTO timeout_effects VALUES ($1, 'before')", [event.eventId]);
      if (event.eventId === 'evt_hung') {
        await hungGate; // never opened while the batch runs
        lateWrite = ctx.tx.query("INSERT INTO timeout_effects VALUES ($1, 'after')", [event.eventId]);
        await lateWrite;
      }
    });
    const context = testContext(t.db, config);
    const worker = createInboxWorker(context, { handlers, workerId: 'timeout-test' });
    const now = Date.now();
    await insertInvoiceDelivery(t.db, { eventId: 'evt_hung', invoiceId: 'inv_hung', orderId: 'o1', status: 'paid', occurredAt: new Date(now - 60_000) });
    await insertInvoiceDelivery(t.db, { eventId: 'evt_next', invoiceId: 'inv_next', orderId: 'o2', status: 'paid', occurredAt: new Date(now - 30_000) });

    expect(await worker.runOnce()).toBe(2);

    const hung = await deliveryRow(t.db, 'evt_hung');
    expect(hung).toMatchObject({ status: 'pending', attempts: 1 });
    expect(hung!.last_error).toMatch(/handler timed out after 300 ms/);
    const attempts = await t.db.query<{ outcome: string; error: string | null }>(
      "SELECT outcome, error FROM inbox_attempts WHERE source = $1 AND event_id = 'evt_hung'",
      [SOURCE],
    );
    expect(attempts.rows).toEqual([{ outcome: 'retry', error: expect.stringMatching(/handler timed out after 300 ms/) }]);
    expect(await effects('evt_hung')).toEqual([]);
    const timeouts = await context.metrics.getSingleMetric('tekil_worker_handler_timeouts_total')?.get();
    expect(timeouts?.values).toEqual([expect.objectContaining({ value: 1, labels: { source: SOURCE } })]);
    // The neighbour ran after the hung handler and committed.
    expect(await deliveryRow(t.db, 'evt_next')).toMatchObject({ status: 'done' });
    expect(await effects('evt_next')).toEqual(['before']);

    // The hung handler wakes up late: its write through the revoked ctx.tx is refused.
    releaseHung();
    await waitUntil(() => lateWrite !== undefined, 5_000, 'the late write');
    await expect(lateWrite).rejects.toMatchObject({ code: 'HANDLER_TIMEOUT' });
    expect(await effects('evt_hung')).toEqual([]);
  });

  it('each handler gets the whole timeout, also when one before it used most of its own', async () => {
    // One timer serves the batch: armed at the first handler's start, it must not expire the second
    // one early, and must still expire it on time.
    const config = workerTestConfig({ worker: { batch_size: 10, concurrency: 1, lease: '10s', poll_interval: '1s', handler_timeout: '1s' } });
    const handlers = defineHandlers().on(SOURCE, '*', async (event, ctx) => {
      if (event.eventId === 'evt_slow_ok') {
        const until = Date.now() + 600; // work that takes most of its timeout, not a barrier
        await waitUntil(() => Date.now() >= until, 5_000, "the slow handler's work");
        await ctx.tx.query("INSERT INTO timeout_effects VALUES ($1, 'before')", [event.eventId]);
      } else if (event.eventId === 'evt_hangs_later') {
        await new Promise<never>(() => {});
      }
    });
    const worker = createInboxWorker(testContext(t.db, config), { handlers, workerId: 'timeout-clock' });
    await t.db.query("UPDATE inbox_queue SET next_attempt_at = now() + interval '1 hour'"); // earlier tests' retries stay out
    const now = Date.now();
    await insertInvoiceDelivery(t.db, { eventId: 'evt_slow_ok', invoiceId: 'inv_slow_ok', orderId: 'o5', status: 'paid', occurredAt: new Date(now - 60_000) });
    await insertInvoiceDelivery(t.db, {
      eventId: 'evt_hangs_later',
      invoiceId: 'inv_hangs',
      orderId: 'o6',
      status: 'paid',
      occurredAt: new Date(now - 30_000),
    });

    expect(await worker.runOnce()).toBe(2);
    expect(await deliveryRow(t.db, 'evt_slow_ok')).toMatchObject({ status: 'done' });
    expect(await effects('evt_slow_ok')).toEqual(['before']);
    const hung = await deliveryRow(t.db, 'evt_hangs_later');
    expect(hung).toMatchObject({ status: 'pending', attempts: 1 });
    expect(hung!.last_error).toMatch(/handler timed out after 1000 ms/);
    // The message names the configured timeout whatever happened; the attempt's recorded duration
    // says how long the hung handler really got. A timer left armed from the slow handler's start
    // would have expired it about 600 ms early.
    const attempt = await t.db.query<{ outcome: string; duration_ms: number }>(
      "SELECT outcome, duration_ms FROM inbox_attempts WHERE source = $1 AND event_id = 'evt_hangs_later'",
      [SOURCE],
    );
    expect(attempt.rows).toEqual([{ outcome: 'retry', duration_ms: expect.any(Number) }]);
    expect(attempt.rows[0]!.duration_ms).toBeGreaterThanOrEqual(1_000);
  });

  // A handler stuck inside a statement (here: waiting on a lock the test holds) holds the connection
  // itself; the worker cancels that statement. PGlite runs statements synchronously: Postgres only.
  it.skipIf(!onPostgres)('a handler stuck in a statement is cancelled, and the batch commits without it', async () => {
    const config = workerTestConfig({ worker: { batch_size: 10, concurrency: 1, lease: '10s', poll_interval: '1s', handler_timeout: '300ms' } });
    const holder = new pg.Client({ connectionString: t.url });
    await holder.connect();
    try {
      await holder.query('SELECT pg_advisory_lock(7301)');
      const handlers = defineHandlers().on(SOURCE, '*', async (event, ctx) => {
        await ctx.tx.query("INSERT INTO timeout_effects VALUES ($1, 'before')", [event.eventId]);
        if (event.eventId === 'evt_stuck') await ctx.tx.query('SELECT pg_advisory_xact_lock(7301)');
      });
      const worker = createInboxWorker(testContext(t.db, config), { handlers, workerId: 'timeout-stuck' });
      await t.db.query("UPDATE inbox_queue SET next_attempt_at = now() + interval '1 hour'"); // earlier tests' retries stay out
      const now = Date.now();
      await insertInvoiceDelivery(t.db, { eventId: 'evt_stuck', invoiceId: 'inv_stuck', orderId: 'o3', status: 'paid', occurredAt: new Date(now - 60_000) });
      await insertInvoiceDelivery(t.db, { eventId: 'evt_after', invoiceId: 'inv_after', orderId: 'o4', status: 'paid', occurredAt: new Date(now - 30_000) });

      expect(await worker.runOnce()).toBe(2);

      const stuck = await deliveryRow(t.db, 'evt_stuck');
      expect(stuck).toMatchObject({ status: 'pending', attempts: 1 });
      expect(stuck!.last_error).toMatch(/handler timed out after 300 ms/);
      expect(await effects('evt_stuck')).toEqual([]);
      expect(await deliveryRow(t.db, 'evt_after')).toMatchObject({ status: 'done' });
      expect(await effects('evt_after')).toEqual(['before']);
    } finally {
      await holder.end();
    }
  });
});

describe('worker.handler_timeout configuration', () => {
  it('defaults to 20s, or half the lease when that is shorter', () => {
    expect(workerTestConfig({ worker: { lease: '60s' } }).worker.handler_timeout).toBe(20_000);
    expect(workerTestConfig({ worker: { lease: '2s' } }).worker.handler_timeout).toBe(1_000);
  });

  it('refuses a timeout longer than half the lease: the handler could outlive its claim', () => {
    expect(() => workerTestConfig({ worker: { lease: '10s', handler_timeout: '6s' } })).toThrow(
      /worker\.handler_timeout: must be above 0 and at most half the lease/,
    );
    expect(() => workerTestConfig({ worker: { lease: '10s', handler_timeout: 0 } })).toThrow(/handler_timeout/);
  });
});

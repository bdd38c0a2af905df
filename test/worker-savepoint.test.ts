import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, type TestDb } from './helpers/db.js';
import { deliveryRow, insertInvoiceDelivery, SOURCE, testContext, workerTestConfig } from './helpers/inbox.js';
import { defineHandlers } from '../src/worker/handlers.js';
import { createInboxWorker } from '../src/worker/worker.js';

/**
 * A handler's savepoint is taken lazily, on its first statement. A handler that sends several
 * statements at once must still have every one of them behind that savepoint: one sent before it
 * would survive the rollback of a failed attempt and commit with the batch, while the delivery is
 * retried (two effects).
 */
describe('worker: the lazy savepoint covers statements sent at once', () => {
  let t: TestDb;

  beforeAll(async () => {
    t = await createTestDb();
    await t.db.exec('CREATE TABLE savepoint_effects (event_id text NOT NULL, step text NOT NULL)');
  });
  afterAll(async () => t?.close());

  const effects = async (eventId: string) =>
    (await t.db.query<{ step: string }>('SELECT step FROM savepoint_effects WHERE event_id = $1 ORDER BY step', [eventId])).rows.map((r) => r.step);

  /** Two INSERTs sent together through ctx.tx as the handler's first statements. */
  const insertBoth = (tx: { query: (sql: string, params: unknown[]) => Promise<unknown> }, eventId: string) =>
    Promise.all([tx.query("INSERT INTO savepoint_effects VALUES ($1, 'a')", [eventId]), tx.query("INSERT INTO savepoint_effects VALUES ($1, 'b')", [eventId])]);

  it('a handler that sends two statements at once and then throws leaves neither; the retry makes one effect', async () => {
    const config = workerTestConfig({ worker: { batch_size: 10, concurrency: 1, lease: '10s', poll_interval: '1s' } });
    let failing = true;
    const handlers = defineHandlers().on(SOURCE, '*', async (event, ctx) => {
      await insertBoth(ctx.tx, event.eventId);
      if (failing) throw new Error('the outside call failed after both writes');
    });
    const worker = createInboxWorker(testContext(t.db, config), { handlers, workerId: 'savepoint-throw' });
    await insertInvoiceDelivery(t.db, { eventId: 'evt_both_throw', invoiceId: 'inv_both_throw', orderId: 'o1', status: 'paid' });

    expect(await worker.runOnce()).toBe(1);
    expect(await deliveryRow(t.db, 'evt_both_throw')).toMatchObject({
      status: 'pending',
      attempts: 1,
      last_error: 'Error: the outside call failed after both writes',
    });
    expect(await effects('evt_both_throw')).toEqual([]);

    // The retry succeeds: exactly one effect in all.
    failing = false;
    await t.db.query("UPDATE inbox_queue SET next_attempt_at = now() WHERE event_id = 'evt_both_throw'");
    expect(await worker.runOnce()).toBe(1);
    expect(await deliveryRow(t.db, 'evt_both_throw')).toMatchObject({ status: 'done', attempts: 2 });
    expect(await effects('evt_both_throw')).toEqual(['a', 'b']);
  });

  it('a handler that sends two statements at once and then times out leaves neither', async () => {
    const config = workerTestConfig({ worker: { batch_size: 10, concurrency: 1, lease: '10s', poll_interval: '1s', handler_timeout: '300ms' } });
    const handlers = defineHandlers().on(SOURCE, '*', async (event, ctx) => {
      await insertBoth(ctx.tx, event.eventId);
      await new Promise<never>(() => {}); // never answers
    });
    const worker = createInboxWorker(testContext(t.db, config), { handlers, workerId: 'savepoint-timeout' });
    await t.db.query("UPDATE inbox_queue SET next_attempt_at = now() + interval '1 hour'"); // the earlier test's rows stay out
    await insertInvoiceDelivery(t.db, { eventId: 'evt_both_hang', invoiceId: 'inv_both_hang', orderId: 'o2', status: 'paid' });

    expect(await worker.runOnce()).toBe(1);
    const row = await deliveryRow(t.db, 'evt_both_hang');
    expect(row).toMatchObject({ status: 'pending', attempts: 1 });
    expect(row!.last_error).toMatch(/handler timed out after 300 ms/);
    expect(await effects('evt_both_hang')).toEqual([]);
  });

  it('a statement the handler sends after it returned is refused, not run outside its savepoint', async () => {
    const config = workerTestConfig({ worker: { batch_size: 10, concurrency: 1, lease: '10s', poll_interval: '1s' } });
    let kept: { query: (sql: string, params: unknown[]) => Promise<unknown> } | undefined;
    const handlers = defineHandlers().on(SOURCE, '*', async (event, ctx) => {
      await ctx.tx.query("INSERT INTO savepoint_effects VALUES ($1, 'a')", [event.eventId]);
      if (event.eventId === 'evt_late_write') kept = ctx.tx; // used after the handler returned, below
    });
    const worker = createInboxWorker(testContext(t.db, config), { handlers, workerId: 'savepoint-late' });
    await insertInvoiceDelivery(t.db, { eventId: 'evt_late_write', invoiceId: 'inv_late_write', orderId: 'o3', status: 'paid' });

    // (an earlier test's retried delivery may share the batch)
    expect(await worker.runOnce()).toBeGreaterThanOrEqual(1);
    expect(kept).toBeDefined();
    // The batch has committed and its connection went back to the pool: a write through the old ctx.tx
    // would run on whatever that connection does next, outside any transaction of this delivery.
    await expect(kept!.query("INSERT INTO savepoint_effects VALUES ($1, 'late')", ['evt_late_write'])).rejects.toThrow(/ctx\.tx is closed/);
    expect(await deliveryRow(t.db, 'evt_late_write')).toMatchObject({ status: 'done', attempts: 1 });
    expect(await effects('evt_late_write')).toEqual(['a']);
  });
});

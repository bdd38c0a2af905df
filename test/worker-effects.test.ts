import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import pg from 'pg';
import { createTestDb, onPostgres, type TestDb } from './helpers/db.js';
import { waitUntil } from './helpers/wait.js';
import {
  createOrder,
  deliveryRow,
  drain,
  insertInvoiceDelivery,
  ledgerCount,
  SOURCE,
  waitForLockWait,
  testContext,
  workerTestConfig,
} from './helpers/inbox.js';
import { createExampleSchema, orderHandlers, type AfterPaid } from '../examples/orders/handlers.js';
import { createInboxWorker, type InboxWorker } from '../src/worker/worker.js';
import { replayDelivery, replayMatching } from '../src/inbox/index.js';

/** Processing with the example shop: every scenario makes the failure happen, then reads the database. */
describe('worker: exactly one effect', () => {
  let t: TestDb;
  let outsideCalls: string[];
  let afterPaid: AfterPaid;
  let worker: InboxWorker;
  const config = workerTestConfig();

  beforeAll(async () => {
    t = await createTestDb();
    await createExampleSchema(t.db);
    worker = createInboxWorker(testContext(t.db, config), {
      handlers: orderHandlers({ source: SOURCE, afterPaid: (call) => afterPaid(call) }),
    });
  });
  afterAll(async () => t?.close());
  beforeEach(() => {
    outsideCalls = [];
    afterPaid = async ({ idempotencyKey }) => {
      outsideCalls.push(idempotencyKey);
    };
  });

  it('the same event sequentially and 50 copies concurrently → one effect', async () => {
    await createOrder(t.db, 'ord_1');
    const event = { eventId: 'evt_seq_1', invoiceId: 'inv_1', orderId: 'ord_1', status: 'paid' };
    expect(await insertInvoiceDelivery(t.db, event)).toBe(true);
    await drain(worker, t.db);
    // The provider sends it again after it was processed, then 50 copies at once while workers run.
    expect(await insertInvoiceDelivery(t.db, event)).toBe(false);
    const copies = await Promise.all([...Array.from({ length: 50 }, () => insertInvoiceDelivery(t.db, event)), worker.runOnce(), worker.runOnce()]);
    expect(copies.slice(0, 50).filter(Boolean)).toHaveLength(0);
    await drain(worker, t.db);
    expect(await ledgerCount(t.db, 'ord_1')).toBe(1);
    expect(outsideCalls).toEqual([`${SOURCE}:evt_seq_1`]);
    expect(await deliveryRow(t.db, 'evt_seq_1')).toMatchObject({ status: 'done', attempts: 1, result_ref: 'ord_1' });

    // A second event id for the same payment (the provider sent it to two URLs): the conditional
    // update in the handler still makes it one effect.
    await insertInvoiceDelivery(t.db, { ...event, eventId: 'evt_seq_2' });
    await drain(worker, t.db);
    expect(await ledgerCount(t.db, 'ord_1')).toBe(1);
  });

  it('an outside call failing after the database write → rolled back, retried, one effect', async () => {
    await createOrder(t.db, 'ord_3');
    let failuresLeft = 2;
    afterPaid = async ({ idempotencyKey }) => {
      outsideCalls.push(idempotencyKey);
      if (failuresLeft-- > 0) throw new Error('warehouse: connection reset');
    };
    await insertInvoiceDelivery(t.db, { eventId: 'evt_out_1', invoiceId: 'inv_3', orderId: 'ord_3', status: 'paid' });
    expect(await worker.runOnce()).toBe(1);
    // The first attempt wrote the order and the ledger row, then the outside call threw: all gone.
    const afterFirst = await t.db.query<{ status: string }>("SELECT status FROM example_orders WHERE id = 'ord_3'");
    expect(afterFirst.rows[0]!.status).toBe('awaiting_payment');
    expect(await ledgerCount(t.db, 'ord_3')).toBe(0);
    expect(await deliveryRow(t.db, 'evt_out_1')).toMatchObject({ status: 'pending', attempts: 1, last_error: 'Error: warehouse: connection reset' });
    await drain(worker, t.db);
    expect(await ledgerCount(t.db, 'ord_3')).toBe(1);
    expect(outsideCalls).toEqual(Array(3).fill(`${SOURCE}:evt_out_1`));
    expect(await deliveryRow(t.db, 'evt_out_1')).toMatchObject({ status: 'done', attempts: 3 });
    const attempts = await t.db.query<{ outcome: string; error: string | null }>(
      "SELECT outcome, error FROM inbox_attempts WHERE event_id = 'evt_out_1' ORDER BY id",
    );
    expect(attempts.rows.map((a) => a.outcome)).toEqual(['retry', 'retry', 'done']);
  });

  it('one throwing handler in a batch rolls back only its own work', async () => {
    await createOrder(t.db, 'ord_b1');
    await createOrder(t.db, 'ord_b2');
    afterPaid = async ({ orderId }) => {
      if (orderId === 'ord_b1') throw new Error('boom');
    };
    await insertInvoiceDelivery(t.db, { eventId: 'evt_b1', invoiceId: 'inv_b1', orderId: 'ord_b1', status: 'paid' });
    await insertInvoiceDelivery(t.db, { eventId: 'evt_b2', invoiceId: 'inv_b2', orderId: 'ord_b2', status: 'paid' });
    expect(await worker.runOnce()).toBe(2);
    expect(await ledgerCount(t.db, 'ord_b1')).toBe(0);
    expect(await ledgerCount(t.db, 'ord_b2')).toBe(1);
    expect((await deliveryRow(t.db, 'evt_b1'))?.status).toBe('pending');
    expect((await deliveryRow(t.db, 'evt_b2'))?.status).toBe('done');
    afterPaid = async () => {};
    await drain(worker, t.db);
    expect(await ledgerCount(t.db, 'ord_b1')).toBe(1);
  });

  it('a processed event replayed by hand → no second effect', async () => {
    await createOrder(t.db, 'ord_6');
    await insertInvoiceDelivery(t.db, { eventId: 'evt_rep_1', invoiceId: 'inv_6', orderId: 'ord_6', status: 'paid' });
    await drain(worker, t.db);
    await expect(replayDelivery(t.db, SOURCE, 'evt_rep_1', false)).rejects.toMatchObject({ code: 'CONFLICT' });
    await replayDelivery(t.db, SOURCE, 'evt_rep_1', true);
    await drain(worker, t.db);
    expect(await deliveryRow(t.db, 'evt_rep_1')).toMatchObject({ status: 'done', attempts: 1, result_ref: 'ord_6' });
    expect(await ledgerCount(t.db, 'ord_6')).toBe(1);
    expect(outsideCalls).toEqual([`${SOURCE}:evt_rep_1`]);
    const attempts = await t.db.query<{ n: number }>("SELECT count(*)::int AS n FROM inbox_attempts WHERE event_id = 'evt_rep_1' AND outcome = 'done'");
    expect(attempts.rows[0]!.n).toBe(2);
  });

  it('a permanently failing handler → dead after the configured attempts; replayed after the fix → done', async () => {
    await createOrder(t.db, 'ord_d');
    let fixed = false;
    afterPaid = async () => {
      if (!fixed) throw new Error('warehouse: 503');
    };
    await insertInvoiceDelivery(t.db, { eventId: 'evt_dead_1', invoiceId: 'inv_d', orderId: 'ord_d', status: 'paid' });
    await drain(worker, t.db);
    const dead = await deliveryRow(t.db, 'evt_dead_1');
    expect(dead).toMatchObject({ status: 'dead', attempts: config.sources[SOURCE]!.retry.max_attempts });
    expect(dead?.last_error).toContain('gave up after 3 attempts');
    expect(await ledgerCount(t.db, 'ord_d')).toBe(0);

    fixed = true;
    expect(await replayMatching(t.db, { status: 'dead', source: SOURCE, resourceId: 'inv_d' }, false)).toBe(1);
    await drain(worker, t.db);
    expect(await deliveryRow(t.db, 'evt_dead_1')).toMatchObject({ status: 'done', attempts: 1 });
    expect(await ledgerCount(t.db, 'ord_d')).toBe(1);
  });

  it('invalid data (PermanentError, failed validation) → dead at once, no effect', async () => {
    await createOrder(t.db, 'ord_v', 1000, 'TRY');
    await insertInvoiceDelivery(t.db, { eventId: 'evt_amount', invoiceId: 'inv_v', orderId: 'ord_v', status: 'paid', amount: 1 });
    await t.db.query(`INSERT INTO inbox_deliveries (source, event_id, resource_id, event_type, body) VALUES ($1, 'evt_garbage', 'inv_g', 'invoice.paid', $2)`, [
      SOURCE,
      Buffer.from('{"data": {"id": 5}}'),
    ]);
    await drain(worker, t.db);
    const amount = await deliveryRow(t.db, 'evt_amount');
    expect(amount).toMatchObject({ status: 'dead', attempts: 1 });
    expect(amount?.last_error).toMatch(/PermanentError: invoice inv_v is for 1 TRY/);
    const garbage = await deliveryRow(t.db, 'evt_garbage');
    expect(garbage).toMatchObject({ status: 'dead', attempts: 1 });
    expect(garbage?.last_error).toMatch(/payload validation failed/);
    expect(await ledgerCount(t.db, 'ord_v')).toBe(0);
  });

  it.runIf(onPostgres)('a batch slower than its lease: another worker takes the delivery, the slow batch rolls back, one effect', async () => {
    await createOrder(t.db, 'ord_slow');
    const shortLease = workerTestConfig({ worker: { batch_size: 10, concurrency: 1, lease: '300ms', poll_interval: '20ms' } });
    const handlers = orderHandlers({ source: SOURCE, afterPaid: (call) => afterPaid(call) });
    const slow = createInboxWorker(testContext(t.db, shortLease), { handlers, workerId: 'slow' });
    const fast = createInboxWorker(testContext(t.db, shortLease), { handlers, workerId: 'fast' });
    // The slow batch stalls after its handler (whose timeout cannot outlast the lease), when it records
    // the resource's new state: the test holds that row's lock until the lease has run out.
    await t.db.query(
      `INSERT INTO resources (source, resource_id, state, rank, occurred_at, event_id)
       VALUES ($1, 'inv_slow', 'awaiting_payment', 0, now() - interval '1 hour', 'evt_slow_created')`,
      [SOURCE],
    );
    await insertInvoiceDelivery(t.db, { eventId: 'evt_slow', invoiceId: 'inv_slow', orderId: 'ord_slow', status: 'paid' });
    const holder = new pg.Client({ connectionString: t.url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query("SELECT 1 FROM resources WHERE resource_id = 'inv_slow' FOR UPDATE");
      const slowRun = slow.runOnce();
      await waitForLockWait(t.db, 'transactionid', 'the slow batch waiting on the resource row');
      await waitUntil(
        async () => (await t.db.query("SELECT 1 FROM inbox_queue WHERE event_id = 'evt_slow' AND locked_until < now()")).rowCount === 1,
        5_000,
        'the lease to expire',
      );
      const fastRun = fast.runOnce();
      // The fast batch claims the delivery, then waits for the slow one's resource lock.
      await waitForLockWait(t.db, 'advisory', 'the fast batch waiting on the resource lock');
      // ...and stays there past half its own lease, so it will start nothing.
      await waitUntil(
        async () =>
          (
            await t.db.query(
              "SELECT 1 FROM inbox_queue WHERE event_id = 'evt_slow' AND locked_by LIKE 'fast:%' AND claimed_at < now() - interval '150 milliseconds'",
            )
          ).rowCount === 1,
        5_000,
        "half the fast batch's lease",
      );
      await holder.query('COMMIT');
      await expect(slowRun).rejects.toMatchObject({ code: 'LEASE_LOST' });
      // The fast batch waited for the slow one's resource lock past half its own lease, so it started
      // nothing and gave the delivery back; its next batch processes it.
      expect(await fastRun).toBe(1);
    } finally {
      await holder.end();
    }
    expect(await deliveryRow(t.db, 'evt_slow')).toMatchObject({ status: 'pending' });
    expect(await fast.runOnce()).toBe(1);
    expect(await ledgerCount(t.db, 'ord_slow')).toBe(1);
    expect(await deliveryRow(t.db, 'evt_slow')).toMatchObject({ status: 'done', attempts: 2 });
    const attempts = await t.db.query<{ outcome: string }>("SELECT outcome FROM inbox_attempts WHERE event_id = 'evt_slow' ORDER BY id");
    expect(attempts.rows.map((a) => a.outcome)).toEqual(['lost', 'done']);
  });
});

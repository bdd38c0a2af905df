import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, onPostgres, type TestDb } from './helpers/db.js';
import { createOrder, deliveryRow, drain, insertInvoiceDelivery, ledgerCount, SOURCE, testContext, workerTestConfig } from './helpers/inbox.js';
import { waitUntil } from './helpers/wait.js';
import { createExampleSchema, orderHandlers } from '../examples/orders/handlers.js';
import { createInboxWorker } from '../src/worker/worker.js';
import { defineHandlers } from '../src/worker/handlers.js';
import { replayDelivery } from '../src/inbox/index.js';

const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000);

describe('worker: ordering and stale events', () => {
  let t: TestDb;
  const config = workerTestConfig();

  beforeAll(async () => {
    t = await createTestDb({ poolSize: 12 });
    await createExampleSchema(t.db);
  });
  afterAll(async () => t?.close());

  it('events of one invoice in reverse order (paid before confirming) → paid; the late confirming is stale', async () => {
    const worker = createInboxWorker(testContext(t.db, config), { handlers: orderHandlers({ source: SOURCE }) });
    await createOrder(t.db, 'ord_4');
    // The provider's confirming happened first, but its delivery arrives after paid was processed.
    await insertInvoiceDelivery(t.db, { eventId: 'evt_paid', invoiceId: 'inv_4', orderId: 'ord_4', status: 'paid', occurredAt: minutesAgo(1) });
    await drain(worker, t.db);
    await insertInvoiceDelivery(t.db, { eventId: 'evt_confirming', invoiceId: 'inv_4', orderId: 'ord_4', status: 'confirming', occurredAt: minutesAgo(2) });
    await drain(worker, t.db);

    const order = await t.db.query<{ status: string }>("SELECT status FROM example_orders WHERE id = 'ord_4'");
    expect(order.rows[0]!.status).toBe('paid');
    expect(await ledgerCount(t.db, 'ord_4', 'order_confirming')).toBe(0);
    const stale = await deliveryRow(t.db, 'evt_confirming');
    expect(stale).toMatchObject({ status: 'stale', attempts: 1 });
    expect(stale?.last_error).toMatch(/terminal state paid/);
    const resource = await t.db.query<{ state: string; event_id: string }>("SELECT state, event_id FROM resources WHERE resource_id = 'inv_4'");
    expect(resource.rows[0]).toMatchObject({ state: 'paid', event_id: 'evt_paid' });
    const attempts = await t.db.query<{ outcome: string }>("SELECT outcome FROM inbox_attempts WHERE event_id = 'evt_confirming'");
    expect(attempts.rows.map((a) => a.outcome)).toEqual(['stale']);

    // Replaying a stale event re-checks the guard: still stale, still no effect.
    await replayDelivery(t.db, SOURCE, 'evt_confirming', false);
    await drain(worker, t.db);
    expect((await deliveryRow(t.db, 'evt_confirming'))?.status).toBe('stale');
    expect(await ledgerCount(t.db, 'ord_4', 'order_confirming')).toBe(0);
  });

  it('pending events of one resource run in provider time, whatever order they arrived in', async () => {
    const worker = createInboxWorker(testContext(t.db, config), { handlers: orderHandlers({ source: SOURCE }) });
    await createOrder(t.db, 'ord_5');
    await insertInvoiceDelivery(t.db, { eventId: 'evt_5_paid', invoiceId: 'inv_5', orderId: 'ord_5', status: 'paid', occurredAt: minutesAgo(1) });
    await insertInvoiceDelivery(t.db, { eventId: 'evt_5_conf', invoiceId: 'inv_5', orderId: 'ord_5', status: 'confirming', occurredAt: minutesAgo(3) });
    await insertInvoiceDelivery(t.db, { eventId: 'evt_5_wait', invoiceId: 'inv_5', orderId: 'ord_5', status: 'underpaid_waiting', occurredAt: minutesAgo(2) });
    await drain(worker, t.db);
    const ledger = await t.db.query<{ kind: string }>("SELECT kind FROM example_ledger WHERE order_id = 'ord_5' ORDER BY id");
    expect(ledger.rows.map((r) => r.kind)).toEqual(['order_confirming', 'order_underpaid_waiting', 'order_paid']);
    for (const id of ['evt_5_paid', 'evt_5_conf', 'evt_5_wait']) expect((await deliveryRow(t.db, id))?.status).toBe('done');
  });

  it.runIf(onPostgres)('several concurrent worker loops: one delivery per resource at a time, in provider time', async () => {
    const source = 'seq';
    const cfg = workerTestConfig({ worker: { batch_size: 7, concurrency: 4, lease: '5s', poll_interval: '5ms' } });
    cfg.sources[source] = { ...cfg.sources[SOURCE]!, ordering: undefined };
    let inFlight = new Map<string, number>();
    let overlaps = 0;
    const seen = new Map<string, number[]>();
    const handlers = defineHandlers().on(source, '*', async (event, ctx) => {
      const r = event.resourceId!;
      inFlight.set(r, (inFlight.get(r) ?? 0) + 1);
      if (inFlight.get(r)! > 1) overlaps++;
      await new Promise((r) => setTimeout(r, Math.random() * 3)); // uneven work, not a barrier
      const seq = Number(event.eventId.split('_')[2]);
      seen.set(r, [...(seen.get(r) ?? []), seq]);
      await ctx.tx.query('SELECT 1');
      inFlight.set(r, inFlight.get(r)! - 1);
    });
    // 20 resources × 8 events, inserted in shuffled order; occurred_at gives the true order.
    const base = Date.now() - 3_600_000;
    const rows: Array<[string, string, Date]> = [];
    for (let r = 0; r < 20; r++) for (let s = 0; s < 8; s++) rows.push([`res_${r}`, `evt_${r}_${s}`, new Date(base + s * 1000)]);
    rows.sort(() => Math.random() - 0.5);
    for (const [resource, eventId, at] of rows) {
      await t.db.query(`INSERT INTO inbox_deliveries (source, event_id, resource_id, event_type, occurred_at, body) VALUES ($1, $2, $3, 'x', $4, '\\x7b7d')`, [
        source,
        eventId,
        resource,
        at,
      ]);
    }
    const workers = [0, 1, 2, 3].map(() => createInboxWorker(testContext(t.db, cfg), { handlers }));
    await Promise.all(workers.map((w) => w.start()));
    try {
      await waitUntil(
        async () =>
          (await t.db.query<{ n: number }>("SELECT count(*)::int AS n FROM inbox_deliveries WHERE source = 'seq' AND status <> 'done'")).rows[0]!.n === 0,
        20_000,
        'every seq delivery to be done',
      );
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
    }
    inFlight = new Map();
    expect(overlaps).toBe(0);
    expect(seen.size).toBe(20);
    for (const order of seen.values()) expect(order).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });
});

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/index.js';
import { showDelivery } from '../src/inbox/show.js';
import { resourceTimeline } from '../src/inbox/timeline.js';
import { defineHandlers } from '../src/worker/handlers.js';
import { createInboxWorker, type InboxWorker } from '../src/worker/worker.js';
import { createTestDb, onPostgres, type TestDb } from './helpers/db.js';
import { deliveryRow, testContext } from './helpers/inbox.js';
import { startFakeIyzico, startFakePapara, startFakePaytr, type PaymentApi, type PaytrOrder } from './helpers/payment-apis.js';

const PAYTR = { merchantId: '100200', key: 'paytr-merchant-key', salt: 'paytr-merchant-salt' };
const IYZICO = { apiKey: 'sandbox-api-key', secretKey: 'sandbox-secret-key' };
const PAPARA = { apiKey: 'papara-api-key', secret: 'papara-merchant-secret' };

/**
 * confirm: before the effect, tekil reads each payment back from the provider (its lookup served on a
 * real socket, shaped from the provider's docs) and compares amount, currency and status with the
 * notification. A mismatch goes to the review queue with its reason and no effect; a provider that
 * cannot be read is retried on the ladder; a match runs the effect once.
 */
describe('worker: confirm the money before the effect', () => {
  let t: TestDb;
  let worker: InboxWorker;
  let ctx: ReturnType<typeof testContext>;
  let paytr: PaymentApi;
  let iyzico: PaymentApi;
  let papara: PaymentApi;
  const paytrOrders = new Map<string, PaytrOrder>();
  const effects: string[] = [];
  /** The application a forwarding source posts to: what it received is the forward's effect. */
  let app: Server;
  const forwarded: string[] = [];

  beforeAll(async () => {
    t = await createTestDb();
    paytr = await startFakePaytr({ ...PAYTR, orders: paytrOrders });
    iyzico = await startFakeIyzico({
      ...IYZICO,
      payments: [
        { paymentId: '22416031', conversationId: 'order-iyz-1', paidPrice: 120.5, currency: 'TRY', paymentStatus: 'SUCCESS' },
        { paymentId: '22416032', conversationId: 'order-iyz-2', paidPrice: 80, currency: 'TRY', paymentStatus: 'FAILURE' },
      ],
    });
    papara = await startFakePapara({
      apiKey: PAPARA.apiKey,
      payments: [
        { id: 'pp-1', referenceId: 'order-pp-1', amount: 75.5, currency: 0, status: 1 },
        { id: 'pp-2', referenceId: 'order-pp-2', amount: 75.5, currency: 1, status: 1 },
      ],
    });
    app = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        forwarded.push(String(req.headers['webhook-id']));
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => app.listen(0, '127.0.0.1', r));
    const appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}/hooks`;
    // Long backoffs: a test makes a retry due itself.
    const retry = { max_attempts: 5, base: '1m', cap: '1m' };
    const config = parseConfig({
      worker: { batch_size: 50, concurrency: 1, lease: '20s', poll_interval: '20ms' },
      sources: {
        'paytr-shop': {
          scheme: 'paytr',
          paytr: { merchant_key: PAYTR.key, merchant_salt: PAYTR.salt },
          retry,
          confirm: {
            fetch: { provider: 'paytr', merchant_id: PAYTR.merchantId, url: `${paytr.url}/odeme/durum-sorgu` },
            expect: { currency: 'form:currency' },
          },
        },
        'iyzico-shop': {
          scheme: 'iyzico',
          iyzico: { secret_key: IYZICO.secretKey },
          retry,
          confirm: { fetch: { provider: 'iyzico', api_key: IYZICO.apiKey, api_base: iyzico.url } },
        },
        'iyzico-wrong-key': {
          scheme: 'iyzico',
          iyzico: { secret_key: 'not-the-secret' },
          retry,
          confirm: { fetch: { provider: 'iyzico', api_key: IYZICO.apiKey, api_base: iyzico.url } },
        },
        'papara-forward': {
          scheme: 'papara',
          secrets: [PAPARA.secret],
          retry,
          forward: { url: appUrl, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', timeout: '10s' },
          confirm: { fetch: { provider: 'papara', api_key: PAPARA.apiKey, api_base: papara.url } },
        },
        'papara-shop': {
          scheme: 'papara',
          secrets: [PAPARA.secret],
          retry,
          confirm: { fetch: { provider: 'papara', api_key: PAPARA.apiKey, api_base: papara.url } },
        },
      },
    });
    const handlers = defineHandlers().on('paytr-shop', '*', (event) => {
      effects.push(`${event.source}/${event.eventId}`);
    });
    for (const source of ['iyzico-shop', 'iyzico-wrong-key', 'papara-shop']) {
      handlers.on(source, '*', (event) => {
        effects.push(`${event.source}/${event.eventId}`);
      });
    }
    ctx = testContext(t.db, config);
    worker = createInboxWorker(ctx, { handlers });
  });
  afterAll(async () => {
    await Promise.all([paytr?.close(), iyzico?.close(), papara?.close()]);
    app?.closeAllConnections();
    await new Promise((r) => app?.close(r));
    await t?.close();
  });
  beforeEach(() => {
    effects.length = 0;
    paytr.down = false;
  });

  const insert = async (source: string, eventId: string, resourceId: string, body: string, contentType: string) => {
    await t.db.query('INSERT INTO inbox_deliveries (source, event_id, resource_id, event_type, body, content_type) VALUES ($1, $2, $3, $4, $5, $6)', [
      source,
      eventId,
      resourceId,
      'payment',
      Buffer.from(body),
      contentType,
    ]);
  };
  const paytrNotification = (oid: string, status: string, totalAmount: string, currency = 'TL') =>
    insert(
      'paytr-shop',
      `${oid}:${status}`,
      oid,
      new URLSearchParams({ merchant_oid: oid, status, total_amount: totalAmount, currency, hash: 'verified-at-receipt' }).toString(),
      'application/x-www-form-urlencoded',
    );
  const makeDue = (source: string, eventId: string) =>
    t.db.query("UPDATE inbox_queue SET next_attempt_at = now() - interval '1 second' WHERE source = $1 AND event_id = $2", [source, eventId]);

  it('PayTR: the amount and currency the status query reports match the notification → the effect runs once', async () => {
    paytrOrders.set('SP1001', { payment_amount: '49,9', payment_total: '49,9', currency: 'TL' });
    await paytrNotification('SP1001', 'success', '4990');
    await worker.runOnce();
    expect(await deliveryRow(t.db, 'SP1001:success', 'paytr-shop')).toMatchObject({ status: 'done', attempts: 1 });
    expect(effects).toEqual(['paytr-shop/SP1001:success']);
    const asked = paytr.requests.at(-1)!;
    expect(new URLSearchParams(asked.body).get('merchant_oid')).toBe('SP1001');
  });

  it('PayTR: an amount PayTR does not report goes to review with AMOUNT_MISMATCH, and no effect', async () => {
    paytrOrders.set('SP1002', { payment_amount: '39,9', payment_total: '39,9', currency: 'TL' });
    await paytrNotification('SP1002', 'success', '4990');
    await worker.runOnce();
    const row = await deliveryRow(t.db, 'SP1002:success', 'paytr-shop');
    expect(row).toMatchObject({ status: 'dead', attempts: 1 });
    expect(row!.last_error).toContain('AMOUNT_MISMATCH');
    expect(row!.last_error).toContain('the notification says 49.90, PayTR says 39.90');
    expect(effects).toEqual([]);
    // The delivery page and the resource's timeline say why.
    const detail = await showDelivery(t.db, 'paytr-shop', 'SP1002:success');
    expect(detail.attempt_history?.at(-1)).toMatchObject({ outcome: 'dead' });
    expect(detail.attempt_history?.at(-1)?.error).toContain('AMOUNT_MISMATCH');
    const timeline = await resourceTimeline(t.db, 'SP1002', 'paytr-shop');
    expect(timeline.events[0]).toMatchObject({ verdict: 'dead' });
    expect(timeline.events[0]!.reason).toContain('AMOUNT_MISMATCH');
  });

  it('PayTR: a currency other than the one notified → CURRENCY_MISMATCH; "TL" and "TRY" are one currency', async () => {
    paytrOrders.set('SP1003', { payment_amount: '10', payment_total: '10', currency: 'EUR' });
    paytrOrders.set('SP1004', { payment_amount: '10', payment_total: '10', currency: 'TL' });
    await paytrNotification('SP1003', 'success', '1000', 'TL');
    await paytrNotification('SP1004', 'success', '1000', 'TRY');
    await worker.runOnce();
    expect((await deliveryRow(t.db, 'SP1003:success', 'paytr-shop'))!.last_error).toContain('CURRENCY_MISMATCH');
    expect(await deliveryRow(t.db, 'SP1004:success', 'paytr-shop')).toMatchObject({ status: 'done' });
    expect(effects).toEqual(['paytr-shop/SP1004:success']);
  });

  it('PayTR: a "success" the status query does not know (no successful payment) → STATUS_MISMATCH; a "failed" it agrees with runs', async () => {
    await paytrNotification('SP1005', 'success', '4990');
    await paytrNotification('SP1006', 'failed', '0');
    await worker.runOnce();
    const forged = await deliveryRow(t.db, 'SP1005:success', 'paytr-shop');
    expect(forged).toMatchObject({ status: 'dead' });
    expect(forged!.last_error).toContain('STATUS_MISMATCH');
    expect(forged!.last_error).toContain('the notification says status success, PayTR says failed');
    expect(await deliveryRow(t.db, 'SP1006:failed', 'paytr-shop')).toMatchObject({ status: 'done' });
    expect(effects).toEqual(['paytr-shop/SP1006:failed']);
  });

  it('PayTR down: the attempt is retried on the ladder (not reviewed), and the effect runs once it answers', async () => {
    paytrOrders.set('SP1007', { payment_amount: '49,9', payment_total: '49,9', currency: 'TL' });
    await paytrNotification('SP1007', 'success', '4990');
    paytr.down = true;
    await worker.runOnce();
    const waiting = await deliveryRow(t.db, 'SP1007:success', 'paytr-shop');
    expect(waiting).toMatchObject({ status: 'pending', attempts: 1 });
    expect(waiting!.last_error).toContain('PAYMENT_LOOKUP_FAILED');
    expect(waiting!.last_error).toContain('answered 503');
    expect(effects).toEqual([]);
    paytr.down = false;
    await makeDue('paytr-shop', 'SP1007:success');
    await worker.runOnce();
    expect(await deliveryRow(t.db, 'SP1007:success', 'paytr-shop')).toMatchObject({ status: 'done', attempts: 2 });
    expect(effects).toEqual(['paytr-shop/SP1007:success']);
    const counted = await ctx.metrics.getSingleMetricAsString('tekil_inbox_confirm_total');
    expect(counted).toMatch(/tekil_inbox_confirm_total\{source="paytr-shop",outcome="lookup_failed"\} [1-9]/);
    expect(counted).toMatch(/tekil_inbox_confirm_total\{source="paytr-shop",outcome="mismatch"\} [1-9]/);
  });

  it('iyzico: the payment retrieve (IYZWSv2) confirms SUCCESS; a FAILURE behind a SUCCESS notification goes to review', async () => {
    const notification = (paymentId: string, conversationId: string, status: string) =>
      JSON.stringify({
        iyziEventType: 'API_AUTH',
        iyziEventTime: 1733590000000,
        iyziReferenceCode: `ref-${paymentId}`,
        paymentId,
        paymentConversationId: conversationId,
        status,
      });
    await insert('iyzico-shop', 'API_AUTH:22416031:SUCCESS', 'order-iyz-1', notification('22416031', 'order-iyz-1', 'SUCCESS'), 'application/json');
    await insert('iyzico-shop', 'API_AUTH:22416032:SUCCESS', 'order-iyz-2', notification('22416032', 'order-iyz-2', 'SUCCESS'), 'application/json');
    await worker.runOnce();
    expect(await deliveryRow(t.db, 'API_AUTH:22416031:SUCCESS', 'iyzico-shop')).toMatchObject({ status: 'done' });
    const failed = await deliveryRow(t.db, 'API_AUTH:22416032:SUCCESS', 'iyzico-shop');
    expect(failed).toMatchObject({ status: 'dead' });
    expect(failed!.last_error).toContain('STATUS_MISMATCH');
    expect(effects).toEqual(['iyzico-shop/API_AUTH:22416031:SUCCESS']);
    // iyzico verified the request's IYZWSv2 signature: a lookup it refused would not have confirmed.
    expect(iyzico.requests.every((r) => r.headers.authorization?.startsWith('IYZWSv2 '))).toBe(true);
  });

  it('iyzico: a lookup iyzico refuses (a wrong secret key) is a failed lookup, retried, never an effect', async () => {
    await insert(
      'iyzico-wrong-key',
      'API_AUTH:22416031:SUCCESS',
      'order-iyz-1',
      JSON.stringify({ iyziEventType: 'API_AUTH', paymentId: '22416031', paymentConversationId: 'order-iyz-1', status: 'SUCCESS' }),
      'application/json',
    );
    await worker.runOnce();
    const row = await deliveryRow(t.db, 'API_AUTH:22416031:SUCCESS', 'iyzico-wrong-key');
    expect(row).toMatchObject({ status: 'pending', attempts: 1 });
    expect(row!.last_error).toContain('PAYMENT_LOOKUP_FAILED');
    expect(row!.last_error).toContain('1000');
    expect(effects).toEqual([]);
  });

  it('Papara: the payment get confirms amount, currency and status; another currency → CURRENCY_MISMATCH; no id → PAYMENT_ID_MISSING', async () => {
    const notification = (id: string, amount: number, currency: number) =>
      JSON.stringify({ id, referenceId: `order-${id}`, status: 1, amount, currency, merchantSecretKey: PAPARA.secret });
    await insert('papara-shop', 'pp-1:1', 'order-pp-1', notification('pp-1', 75.5, 0), 'application/json');
    await insert('papara-shop', 'pp-2:1', 'order-pp-2', notification('pp-2', 75.5, 0), 'application/json');
    await insert('papara-shop', 'no-id', 'order-x', JSON.stringify({ referenceId: 'order-x', status: 1, amount: 1, currency: 0 }), 'application/json');
    await worker.runOnce();
    expect(await deliveryRow(t.db, 'pp-1:1', 'papara-shop')).toMatchObject({ status: 'done' });
    expect((await deliveryRow(t.db, 'pp-2:1', 'papara-shop'))!.last_error).toContain('CURRENCY_MISMATCH');
    const noId = await deliveryRow(t.db, 'no-id', 'papara-shop');
    expect(noId).toMatchObject({ status: 'dead' });
    expect(noId!.last_error).toContain('PAYMENT_ID_MISSING');
    expect(effects).toEqual(['papara-shop/pp-1:1']);
    expect(papara.requests.find((r) => r.path === '/payments?id=pp-1')?.headers.apikey).toBe(PAPARA.apiKey);
  });

  it('a replayed delivery is confirmed again, and runs once the provider agrees', async () => {
    paytrOrders.set('SP1008', { payment_amount: '20', payment_total: '20', currency: 'TL' });
    await paytrNotification('SP1008', 'success', '2500');
    await worker.runOnce();
    expect(await deliveryRow(t.db, 'SP1008:success', 'paytr-shop')).toMatchObject({ status: 'dead' });
    // The merchant checks with PayTR, the amount is settled there (25,00), and the delivery is replayed.
    paytrOrders.set('SP1008', { payment_amount: '25', payment_total: '25', currency: 'TL' });
    const { replayDelivery } = await import('../src/inbox/replay.js');
    await replayDelivery(t.db, 'paytr-shop', 'SP1008:success', false);
    await worker.runOnce();
    expect(await deliveryRow(t.db, 'SP1008:success', 'paytr-shop')).toMatchObject({ status: 'done' });
    expect(effects).toEqual(['paytr-shop/SP1008:success']);
  });

  it('no transaction is open while tekil waits on the provider: the store answers others meanwhile', async () => {
    paytrOrders.set('SP1009', { payment_amount: '20', payment_total: '20', currency: 'TL' });
    await paytrNotification('SP1009', 'success', '2000');
    let release!: () => void;
    paytr.hold = new Promise<void>((r) => {
      release = r;
    });
    const arrived = new Promise<void>((r) => {
      paytr.onRequest = r;
    });
    const batch = worker.runOnce();
    try {
      await arrived;
      // The lookup is in flight. On the embedded store (one connection) a batch transaction held open
      // would queue this read behind it; on Postgres no session of this database is in a transaction.
      const read = await t.db.query<{ n: number }>("SELECT count(*)::int AS n FROM inbox_deliveries WHERE event_id = 'SP1009:success'");
      expect(read.rows[0]!.n).toBe(1);
      if (onPostgres) {
        const open = await t.db.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'",
        );
        expect(open.rows[0]!.n).toBe(0);
      }
    } finally {
      paytr.hold = undefined;
      paytr.onRequest = undefined;
      release();
    }
    await batch;
    expect(await deliveryRow(t.db, 'SP1009:success', 'paytr-shop')).toMatchObject({ status: 'done' });
  });

  it('a forwarding source: the forward runs only for a payment Papara confirms', async () => {
    const notification = (id: string, amount: number) =>
      JSON.stringify({ id, referenceId: `order-${id}`, status: 1, amount, currency: 0, merchantSecretKey: PAPARA.secret });
    await insert('papara-forward', 'pp-1:1', 'order-pp-1', notification('pp-1', 75.5), 'application/json');
    await insert('papara-forward', 'pp-1:1-forged', 'order-pp-1', notification('pp-1', 7550), 'application/json');
    await worker.runOnce();
    await worker.runOnce();
    expect(await deliveryRow(t.db, 'pp-1:1', 'papara-forward')).toMatchObject({ status: 'done' });
    const forged = await deliveryRow(t.db, 'pp-1:1-forged', 'papara-forward');
    expect(forged).toMatchObject({ status: 'dead' });
    expect(forged!.last_error).toContain('AMOUNT_MISMATCH]: the notification says 7550.00, Papara says 75.50');
    expect(forwarded).toEqual(['papara-forward:pp-1:1']);
  });
});

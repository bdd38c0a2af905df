import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, type TekilConfig } from '../src/config/index.js';
import { runReconcile } from '../src/reconcile/run.js';
import { defineHandlers } from '../src/worker/handlers.js';
import { createInboxWorker } from '../src/worker/worker.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { deliveryRow, testContext } from './helpers/inbox.js';
import { startFakeIyzico, startFakePaytr, type PaymentApi, type PaytrOrder } from './helpers/payment-apis.js';

const PAYTR = { merchantId: '100200', key: 'paytr-merchant-key', salt: 'paytr-merchant-salt' };
const IYZICO = { apiKey: 'sandbox-api-key', secretKey: 'sandbox-secret-key' };

/**
 * Reconcile for providers that list nothing: each payment tekil heard of in the window is read back
 * from PayTR's status query (by merchant_oid) or iyzico's payment retrieve (by paymentConversationId),
 * both on real sockets, a page of resources at a time.
 */
describe('reconcile by payment lookup: PayTR and iyzico', () => {
  let t: TestDb;
  let paytr: PaymentApi;
  let iyzico: PaymentApi;
  let config: TekilConfig;
  const orders = new Map<string, PaytrOrder>([
    ['R1', { payment_amount: '49,9', payment_total: '49,9', currency: 'TL' }],
    ['R2', { payment_amount: '10', payment_total: '10', currency: 'TL' }],
    ['R3', { payment_amount: '10', payment_total: '10', currency: 'TL' }],
  ]);
  const window = { start: new Date(Date.now() - 3_600_000), end: null };
  const deps = () => ({ db: t.db, config, logger: pino({ level: 'silent' }) });

  beforeAll(async () => {
    t = await createTestDb();
    paytr = await startFakePaytr({ ...PAYTR, orders });
    iyzico = await startFakeIyzico({
      ...IYZICO,
      payments: [{ paymentId: '22416031', conversationId: 'order-iyz-1', paidPrice: 120.5, currency: 'TRY', paymentStatus: 'SUCCESS' }],
    });
    config = parseConfig({
      worker: { batch_size: 50, concurrency: 1, lease: '20s', poll_interval: '20ms' },
      sources: {
        'paytr-shop': {
          scheme: 'paytr',
          paytr: { merchant_key: PAYTR.key, merchant_salt: PAYTR.salt },
          reconcile: { preset: 'paytr', merchant_id: PAYTR.merchantId, url: `${paytr.url}/odeme/durum-sorgu`, page_size: 2 },
          confirm: { fetch: { provider: 'paytr', merchant_id: PAYTR.merchantId, url: `${paytr.url}/odeme/durum-sorgu` } },
        },
        'iyzico-shop': {
          scheme: 'iyzico',
          iyzico: { secret_key: IYZICO.secretKey },
          reconcile: { provider: 'iyzico', api_key: IYZICO.apiKey, api_base: iyzico.url },
        },
      },
    });
    const insert = (source: string, eventId: string, resourceId: string, body: string, status: string, contentType: string) =>
      t.db.query(
        `INSERT INTO inbox_deliveries (source, event_id, resource_id, event_type, body, content_type, status)
         VALUES ($1, $2, $3, 'payment', $4, $5, $6)`,
        [source, eventId, resourceId, Buffer.from(body), contentType, status],
      );
    const form = (oid: string, status: string, total: string) => new URLSearchParams({ merchant_oid: oid, status, total_amount: total, hash: 'x' }).toString();
    const FORM = 'application/x-www-form-urlencoded';
    // R1: tekil applied a failure; PayTR now reports the order paid (the customer paid on a second try).
    await insert('paytr-shop', 'R1:failed', 'R1', form('R1', 'failed', '0'), 'done', FORM);
    // R2: applied and paid: nothing to say.
    await insert('paytr-shop', 'R2:success', 'R2', form('R2', 'success', '1000'), 'done', FORM);
    // R3: paid, but tekil's delivery of it is dead (the handler kept failing).
    await insert('paytr-shop', 'R3:success', 'R3', form('R3', 'success', '1000'), 'dead', FORM);
    // R4: tekil applied a success PayTR does not know.
    await insert('paytr-shop', 'R4:success', 'R4', form('R4', 'success', '1000'), 'done', FORM);
    // R5: a failure both agree on.
    await insert('paytr-shop', 'R5:failed', 'R5', form('R5', 'failed', '0'), 'done', FORM);
    await insert(
      'iyzico-shop',
      'API_AUTH:22416031:FAILURE',
      'order-iyz-1',
      JSON.stringify({ iyziEventType: 'API_AUTH', paymentId: '22416031', paymentConversationId: 'order-iyz-1', status: 'FAILURE' }),
      'done',
      'application/json',
    );
  });
  afterAll(async () => {
    await Promise.all([paytr?.close(), iyzico?.close()]);
    await t?.close();
  });

  it('PayTR: pages through the window, reads each order back with a valid paytr_token, and names each difference', async () => {
    const report = await runReconcile(deps(), { source: 'paytr-shop', window, apply: false, trigger: 'cli' });
    expect(report.run.status).toBe('completed');
    expect(Number(report.run.items)).toBe(5);
    const found = report.findings.map((f) => [f.kind, f.resource_id, f.provider_state, f.tekil_state]);
    expect(found).toEqual([
      ['state', 'R1', 'success', 'failed'],
      ['unprocessed', 'R3', 'success', 'dead'],
      ['extra', 'R4', 'failed', 'success'],
    ]);
    // Five orders, five status queries (the fake refuses a wrong token, so each one was signed right).
    expect(paytr.requests.filter((r) => r.path === '/odeme/durum-sorgu')).toHaveLength(5);
  });

  it('PayTR --apply records the paid order in the notification shape; the worker confirms it with PayTR and applies it once', async () => {
    const report = await runReconcile(deps(), { source: 'paytr-shop', window: { start: window.start, end: new Date() }, apply: true, trigger: 'cli' });
    const recorded = report.findings.filter((f) => f.action === 'recorded');
    expect(recorded.map((f) => f.event_id)).toEqual(['reconcile:R1:success']);
    const { rows } = await t.db.query<{ body: Uint8Array; content_type: string; event_type: string }>(
      "SELECT body, content_type, event_type FROM inbox_deliveries WHERE event_id = 'reconcile:R1:success'",
    );
    expect(rows[0]!.content_type).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(new URLSearchParams(Buffer.from(rows[0]!.body).toString()))).toEqual({
      merchant_oid: 'R1',
      status: 'success',
      total_amount: '4990',
      currency: 'TL',
    });
    const effects: string[] = [];
    const worker = createInboxWorker(testContext(t.db, config), { handlers: defineHandlers().on('paytr-shop', '*', (e) => void effects.push(e.eventId)) });
    await worker.runOnce();
    expect(await deliveryRow(t.db, 'reconcile:R1:success', 'paytr-shop')).toMatchObject({ status: 'done' });
    expect(effects).toEqual(['reconcile:R1:success']);
  });

  it('iyzico: reads the payment back by paymentConversationId (IYZWSv2) and records the SUCCESS tekil missed', async () => {
    const report = await runReconcile(deps(), { source: 'iyzico-shop', window, apply: true, trigger: 'cli' });
    expect(report.findings.map((f) => [f.kind, f.resource_id, f.provider_state, f.tekil_state, f.action])).toEqual([
      ['state', 'order-iyz-1', 'SUCCESS', 'FAILURE', 'recorded'],
    ]);
    const sent = JSON.parse(iyzico.requests[0]!.body) as Record<string, unknown>;
    expect(sent).toMatchObject({ paymentConversationId: 'order-iyz-1' });
    const { rows } = await t.db.query<{ body: Uint8Array }>("SELECT body FROM inbox_deliveries WHERE event_id = 'reconcile:order-iyz-1:SUCCESS'");
    expect(JSON.parse(Buffer.from(rows[0]!.body).toString())).toMatchObject({ paymentConversationId: 'order-iyz-1', paymentId: '22416031', status: 'SUCCESS' });
  });
});

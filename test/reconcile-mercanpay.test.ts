import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, type TestDb } from './helpers/db.js';
import { startFakeMercanPay, type FakeApi, type FakeInvoicesControl, type MercanPayInvoiceFixture } from './helpers/provider-apis.js';
import { waitUntil } from './helpers/wait.js';
import { parseConfig } from '../src/config/index.js';
import { isTekilError } from '../src/errors.js';
import { runReconcile } from '../src/reconcile/run.js';
import { startTekil, type RunningTekil } from '../src/runtime.js';
import { createScheme } from '../src/signing/index.js';
import { defineHandlers } from '../src/worker/handlers.js';

const KEY = 'mp_test_reconcile';
const SECRET = 'whsec_bWVyY2FucGF5LXRlc3Q=';
const T0 = Date.parse('2026-11-28T00:00:00Z');
const invoice = (id: string, status: string, minutes: number): MercanPayInvoiceFixture => ({
  id,
  status,
  order_id: `ord_${id}`,
  token: 'USDT',
  paid_amount: status === 'overpaid' ? '60.00' : '49.90',
  updated_at: new Date(T0 + minutes * 60_000).toISOString(),
});
const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${String(i + 1).padStart(2, '0')}`);

const missingPaid = ids('inv_m', 7);
const missingOver = ids('inv_o', 2);
const delivered = ids('inv_d', 3);
const invoices = [
  ...missingPaid.map((id, i) => invoice(id, 'paid', 60 + i)),
  ...missingOver.map((id, i) => invoice(id, 'overpaid', 80 + i)),
  ...delivered.map((id, i) => invoice(id, 'paid', 100 + i)),
  ...ids('inv_w', 3).map((id, i) => invoice(id, 'awaiting_payment', 120 + i)),
];

/** The source as a MercanPay merchant configures it: webhooks are `{id, type, data: {invoice}}`. */
const source = (reconcile: Record<string, unknown>) => ({
  scheme: 'paymos',
  secrets: [SECRET],
  event_id: 'body:id',
  event_type: 'body:type',
  resource_id: 'body:data.invoice.id',
  occurred_at: 'body:data.invoice.updated_at',
  retry: { max_attempts: 3, base: '5ms', cap: '20ms' },
  ordering: { state: 'body:data.invoice.status', states: ['awaiting_payment'], terminal: ['paid', 'overpaid', 'expired'] },
  reconcile,
});

describe('reconcile against a list API shaped like MercanPay (preset: mercanpay)', () => {
  let t: TestDb;
  let api: FakeApi & Pick<FakeInvoicesControl, 'failAfter'>;
  let running: RunningTekil;
  let dataDir: string;
  /** The handler's effect: how many times each invoice was credited. */
  const credited = new Map<string, number>();
  const window = { start: new Date(T0), end: null };
  const deps = () => ({ db: t.db, config: running.ctx.config, logger: pino({ level: 'silent' }) });
  const open = async () => (await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM inbox_deliveries WHERE status = 'pending'`)).rows[0]!.n;

  beforeAll(async () => {
    t = await createTestDb();
    api = await startFakeMercanPay({ key: KEY, invoices: () => invoices });
    dataDir = mkdtempSync(join(tmpdir(), 'tekil-reconcile-mercanpay-'));
    const reconcile = { preset: 'mercanpay', url: `${api.url}/api/invoices`, auth: { kind: 'bearer', token: KEY }, page_size: 3, max_retries: 0 };
    const config = parseConfig({
      worker: { batch_size: 50, concurrency: 2, lease: '2s', poll_interval: '20ms' },
      sources: {
        mercan: source(reconcile),
        // The generic adapter's defaults against the same API: no preset.
        plain: source({ provider: 'generic', url: `${api.url}/api/invoices`, auth: { kind: 'bearer', token: KEY }, max_retries: 0 }),
      },
    });
    const handlers = defineHandlers();
    for (const type of ['invoice.paid', 'invoice.overpaid']) {
      handlers.on<{ data: { invoice: { id: string } } }>('mercan', type, (event) => {
        const id = event.payload.data.invoice.id;
        credited.set(id, (credited.get(id) ?? 0) + 1);
        return { resultRef: id };
      });
    }
    running = await startTekil({
      config,
      roles: ['receiver', 'worker'],
      port: 0,
      host: '127.0.0.1',
      logger: pino({ level: 'silent' }),
      db: t.db,
      env: { TEKIL_DATA_DIR: dataDir },
      handlers,
    });
    for (const [i, id] of delivered.entries()) {
      const body = JSON.stringify({ id: `evt_d${i}`, type: 'invoice.paid', data: { invoice: invoice(id, 'paid', 100 + i) } });
      const res = await request(`${running.url}/in/mercan`, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', ...createScheme('paymos').sign({ body, secrets: [SECRET] }) },
      });
      expect(((await res.body.json()) as { status: string }).status).toBe('accepted');
    }
    await waitUntil(async () => (await open()) === 0, 15_000, 'the webhooks to be processed');
  });
  afterAll(async () => {
    await running?.close();
    await api?.close();
    await t?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('the generic defaults do not fit it: the API refuses the first request (cursor, updated_since, both statuses at once)', async () => {
    const err = await runReconcile(deps(), { source: 'plain', window, apply: false, trigger: 'cli' }).catch((e: unknown) => e);
    expect(isTekilError(err, 'RECONCILE_PROVIDER_FAILED')).toBe(true);
    expect(api.requests.at(-1)).toMatchObject({ status: 400 });
  });

  it('lists paid, then overpaid, one status per call, page by page with before / next_before; finds the missing ones', async () => {
    const from = api.requests.length;
    const report = await runReconcile(deps(), { source: 'mercan', window, apply: false, trigger: 'cli' });
    expect(report.counts).toEqual({ missing: 9, unprocessed: 0, state: 0, extra: 0 });
    expect(new Set(report.findings.map((f) => f.resource_id))).toEqual(new Set([...missingPaid, ...missingOver]));
    // 10 paid at 3 a page: 4 pages; 2 overpaid: 1 page.
    expect(report.run).toMatchObject({ status: 'completed', items: 12, pages: 5 });
    const seen = api.requests.slice(from);
    expect(seen.every((r) => r.status === 200 && r.authorization === `Bearer ${KEY}`)).toBe(true);
    expect(seen.map((r) => r.url.searchParams.getAll('status'))).toEqual([['paid'], ['paid'], ['paid'], ['paid'], ['overpaid']]);
    // Newest first, each page before the last id of the one before; a status starts with no cursor.
    expect(seen.map((r) => r.url.searchParams.get('before'))).toEqual([null, 'inv_m05', 'inv_m02', 'inv_d02', null]);
  });

  it('a run that fails in the last status resumes there: the cursor names the status and the page', async () => {
    // The four paid pages succeed; the first overpaid page fails.
    api.failAfter(4);
    const first = await runReconcile(deps(), { source: 'mercan', window, apply: false, trigger: 'cli' }).catch((e: unknown) => e);
    expect(isTekilError(first, 'RECONCILE_PROVIDER_FAILED')).toBe(true);
    const failed = (
      await t.db.query<{ id: string; cursor: string | null; pages: number }>(`SELECT id, cursor, pages FROM reconcile_runs ORDER BY id DESC LIMIT 1`)
    ).rows[0]!;
    expect(failed).toMatchObject({ cursor: '1:', pages: 4 });
    api.failAfter(null);
    const from = api.requests.length;
    const resumed = await runReconcile(deps(), { source: 'mercan', window, apply: false, trigger: 'cli' });
    expect(resumed.run).toMatchObject({ id: failed.id, status: 'completed', resumed: 1, pages: 5, items: 12 });
    // Only the overpaid listing was asked for again, from its first page.
    expect(api.requests.slice(from).map((r) => [r.url.searchParams.get('status'), r.url.searchParams.get('before')])).toEqual([['overpaid', null]]);
  });

  it('--apply records each missing invoice in the webhook envelope, and the handler credits each once', async () => {
    const report = await runReconcile(deps(), { source: 'mercan', window, apply: true, trigger: 'cli' });
    expect(report.counts.missing).toBe(9);
    await waitUntil(async () => (await open()) === 0, 15_000, 'the recorded deliveries to be processed');
    const rows = await t.db.query<{ event_id: string; event_type: string; status: string; body: Buffer | string }>(
      `SELECT event_id, event_type, status, body FROM inbox_deliveries WHERE headers ? 'x-tekil-reconcile' ORDER BY event_id`,
    );
    expect(rows.rows).toHaveLength(9);
    expect(rows.rows.every((r) => r.status === 'done')).toBe(true);
    const over = rows.rows.find((r) => r.event_id === 'reconcile:inv_o01:overpaid')!;
    expect(over.event_type).toBe('invoice.overpaid');
    expect(JSON.parse(Buffer.from(over.body).toString('utf8'))).toMatchObject({
      id: 'reconcile:inv_o01:overpaid',
      type: 'invoice.overpaid',
      data: { invoice: { id: 'inv_o01', order_id: 'ord_inv_o01' } },
    });
    for (const id of [...missingPaid, ...missingOver, ...delivered]) expect([id, credited.get(id)]).toEqual([id, 1]);
    const again = await runReconcile(deps(), { source: 'mercan', window, apply: true, trigger: 'cli' });
    expect(again.counts).toEqual({ missing: 0, unprocessed: 0, state: 0, extra: 0 });
  });
});

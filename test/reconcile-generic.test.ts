import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, type TestDb } from './helpers/db.js';
import { createOrder, invoiceEvent, SOURCE, workerTestConfig } from './helpers/inbox.js';
import { startFakeInvoices, type FakeApi, type FakeInvoicesControl, type InvoiceFixture } from './helpers/provider-apis.js';
import { waitUntil } from './helpers/wait.js';
import { createExampleSchema, orderHandlers } from '../examples/orders/handlers.js';
import { isTekilError } from '../src/errors.js';
import { runReconcile } from '../src/reconcile/run.js';
import { startTekil, type RunningTekil } from '../src/runtime.js';
import { createScheme } from '../src/signing/index.js';

const KEY = 'pk_generic_reconcile';
const T0 = Date.parse('2026-11-28T00:00:00Z');
const at = (minutes: number) => new Date(T0 + minutes * 60_000);
const invoice = (id: string, status: string, minutes: number, orderId = `ord_${id}`): InvoiceFixture => ({
  id,
  status,
  amount: 4990,
  paid_amount: status === 'paid_over' ? 5990 : 4990,
  currency: 'TRY',
  updated_at: at(minutes).toISOString(),
  order_id: orderId,
});
const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${String(i + 1).padStart(2, '0')}`);

const missingPaid = ids('inv_m', 12);
const missingOver = ids('inv_o', 4);
const delivered = ids('inv_d', 10);
const stateBehind = ids('inv_s', 3);
const deadOne = 'inv_u01';
const extraOne = 'inv_x01';
const invoices: InvoiceFixture[] = [
  ...missingPaid.map((id, i) => invoice(id, 'paid', 60 + i)),
  ...missingOver.map((id, i) => invoice(id, 'paid_over', 80 + i)),
  ...delivered.map((id, i) => invoice(id, 'paid', 100 + i)),
  ...stateBehind.map((id, i) => invoice(id, 'paid', 120 + i)),
  invoice(deadOne, 'paid', 130, 'ord_nobody_has'),
  invoice(extraOne, 'expired', 140),
  ...ids('inv_w', 5).map((id, i) => invoice(id, 'awaiting_payment', 150 + i)),
];

describe('reconcile against a generic cursor-paginated invoice API', () => {
  let t: TestDb;
  let api: FakeApi & FakeInvoicesControl;
  let running: RunningTekil;
  let dataDir: string;
  const window = { start: new Date(T0), end: null };
  const deps = () => ({ db: t.db, config: running.ctx.config, logger: pino({ level: 'silent' }) });
  const count = async (sql: string, params: unknown[] = []) => (await t.db.query<{ n: number }>(sql, params)).rows[0]!.n;
  const ledger = (kind: string) => count('SELECT count(*)::int AS n FROM example_ledger WHERE kind = $1', [kind]);
  const snapshot = async () => ({
    deliveries: await count('SELECT count(*)::int AS n FROM inbox_deliveries'),
    ledger: await count('SELECT count(*)::int AS n FROM example_ledger'),
    orders: (await t.db.query('SELECT id, status FROM example_orders ORDER BY id')).rows,
  });
  const open = () => count(`SELECT count(*)::int AS n FROM inbox_deliveries WHERE status = 'pending'`);

  const sendWebhook = async (eventId: string, inv: string, status: string, minutes: number, orderId = `ord_${inv}`) => {
    const { body } = invoiceEvent({ eventId, invoiceId: inv, orderId, status, occurredAt: at(minutes) });
    const secret = running.ctx.config.sources[SOURCE]!.secrets[0]!;
    const res = await request(`${running.url}/in/${SOURCE}`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', ...createScheme('paymos').sign({ body, secrets: [secret] }) },
    });
    return ((await res.body.json()) as { status: string }).status;
  };

  beforeAll(async () => {
    t = await createTestDb();
    api = await startFakeInvoices({ key: KEY, invoices: () => invoices });
    dataDir = mkdtempSync(join(tmpdir(), 'tekil-reconcile-generic-'));
    await createExampleSchema(t.db);
    for (const inv of invoices) if (inv.order_id !== 'ord_nobody_has') await createOrder(t.db, inv.order_id!);
    const config = workerTestConfig(
      {},
      {
        reconcile: { provider: 'generic', url: `${api.url}/v1/invoices`, auth: { kind: 'bearer', token: KEY }, page_size: 7, max_retries: 1, max_wait: '5s' },
      },
    );
    running = await startTekil({
      config,
      roles: ['receiver', 'worker'],
      port: 0,
      host: '127.0.0.1',
      logger: pino({ level: 'silent' }),
      db: t.db,
      env: { TEKIL_DATA_DIR: dataDir },
      handlers: orderHandlers({ source: SOURCE }),
    });
    for (const [i, inv] of delivered.entries()) expect(await sendWebhook(`evt_d${i}`, inv, 'paid', 100 + i)).toBe('accepted');
    for (const [i, inv] of stateBehind.entries()) expect(await sendWebhook(`evt_s${i}`, inv, 'confirming', 110 + i)).toBe('accepted');
    expect(await sendWebhook('evt_u', deadOne, 'paid', 130, 'ord_nobody_has')).toBe('accepted');
    expect(await sendWebhook('evt_x', extraOne, 'paid', 140)).toBe('accepted');
    await waitUntil(async () => (await open()) === 0, 15_000, 'the webhooks to be processed');
  });
  afterAll(async () => {
    await running?.close();
    await api?.close();
    await t?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('finds paid and overpaid invoices whose webhooks were dropped, over several pages, and changes nothing without --apply', async () => {
    const before = await snapshot();
    const report = await runReconcile(deps(), { source: SOURCE, window, apply: false, trigger: 'cli' });
    expect(report.counts).toEqual({ missing: 16, unprocessed: 1, state: 3, extra: 1 });
    expect(report.run).toMatchObject({ status: 'completed', items: 30, pages: 5 });
    const byKind = (kind: string) => report.findings.filter((f) => f.kind === kind);
    expect(new Set(byKind('missing').map((f) => f.resource_id))).toEqual(new Set([...missingPaid, ...missingOver]));
    expect(byKind('state').map((f) => [f.resource_id, f.provider_state, f.tekil_state])).toEqual(stateBehind.map((id) => [id, 'paid', 'confirming']));
    expect(byKind('unprocessed')[0]).toMatchObject({
      resource_id: deadOne,
      event_id: 'evt_u',
      tekil_state: 'dead',
      detail: `tekil inbox replay ${SOURCE} evt_u`,
    });
    expect(byKind('extra')[0]).toMatchObject({ resource_id: extraOne, event_id: 'evt_x', tekil_state: 'paid' });
    expect(report.findings.every((f) => f.action === 'none')).toBe(true);
    // Both statuses asked for, with the bearer key, page after page by the provider's cursor.
    expect(api.requests[0]!.url.searchParams.getAll('status')).toEqual(['paid', 'paid_over']);
    expect(api.requests.every((r) => r.authorization === `Bearer ${KEY}`)).toBe(true);
    expect(await snapshot()).toEqual(before);
  });

  it('a run that fails mid-way keeps its cursor; the next resumes there, and --apply gives each invoice one effect', async () => {
    api.failAfter(2);
    const first = await runReconcile(deps(), { source: SOURCE, window, apply: true, trigger: 'cli' }).catch((err: unknown) => err);
    expect(isTekilError(first, 'RECONCILE_PROVIDER_FAILED')).toBe(true);
    const failed = (
      await t.db.query<{ id: string; status: string; cursor: string | null; pages: number }>(
        'SELECT id, status, cursor, pages FROM reconcile_runs ORDER BY id DESC LIMIT 1',
      )
    ).rows[0]!;
    expect(failed).toMatchObject({ status: 'failed', pages: 2 });
    expect(failed.cursor).not.toBeNull();
    const recordedSoFar = await count(`SELECT count(*)::int AS n FROM inbox_deliveries WHERE headers ? 'x-tekil-reconcile'`);
    expect(recordedSoFar).toBeGreaterThan(0);

    api.failAfter(null);
    const requestsBefore = api.requests.length;
    const resumed = await runReconcile(deps(), { source: SOURCE, window, apply: true, trigger: 'cli' });
    expect(resumed.run).toMatchObject({ id: failed.id, status: 'completed', resumed: 1, pages: 5, items: 30 });
    expect(api.requests[requestsBefore]!.url.searchParams.get('cursor')).toBe(failed.cursor);
    expect(resumed.counts).toMatchObject({ missing: 16, state: 3, unprocessed: 1 });

    await waitUntil(async () => (await open()) === 0, 15_000, 'the recorded deliveries to be processed');
    expect(await ledger('order_paid')).toBe(delivered.length + missingPaid.length + stateBehind.length + 1);
    expect(await ledger('order_paid_over')).toBe(missingOver.length);
    for (const id of [...missingPaid, ...stateBehind]) {
      expect(await count(`SELECT count(*)::int AS n FROM example_ledger WHERE order_id = $1 AND kind = 'order_paid'`, [`ord_${id}`])).toBe(1);
    }
    // Every recorded delivery has its finding row, and every 'recorded' finding its delivery.
    const synthetic = await t.db.query<{ event_id: string; status: string }>(
      `SELECT event_id, status FROM inbox_deliveries WHERE headers ? 'x-tekil-reconcile' ORDER BY event_id`,
    );
    expect(synthetic.rows).toHaveLength(19);
    expect(synthetic.rows.every((r) => r.status === 'done' && /^reconcile:inv_[mos]\d\d:paid(_over)?$/.test(r.event_id))).toBe(true);
    const recordedFindings = await t.db.query<{ event_id: string }>(`SELECT event_id FROM reconcile_findings WHERE action = 'recorded' ORDER BY event_id`);
    expect(recordedFindings.rows.map((r) => r.event_id)).toEqual(synthetic.rows.map((r) => r.event_id));
  });

  it('a second run changes nothing and reports only what still needs a person', async () => {
    const before = await snapshot();
    const report = await runReconcile(deps(), { source: SOURCE, window, apply: true, trigger: 'cli' });
    expect(report.counts).toEqual({ missing: 0, unprocessed: 1, state: 0, extra: 1 });
    expect(await snapshot()).toEqual(before);
  });

  it('a webhook that arrives after reconcile applied its state gets no second effect', async () => {
    const late = missingPaid[0]!;
    expect(await sendWebhook('evt_late', late, 'paid', 60)).toBe('accepted');
    await waitUntil(async () => (await open()) === 0, 10_000, 'the late webhook');
    const row = (await t.db.query<{ status: string }>(`SELECT status FROM inbox_deliveries WHERE event_id = 'evt_late'`)).rows[0]!;
    expect(row.status).toBe('stale');
    expect(await count(`SELECT count(*)::int AS n FROM example_ledger WHERE order_id = $1`, [`ord_${late}`])).toBe(1);
  });

  it("honours a 429's Retry-After", async () => {
    api.rateLimitNext(1, 1);
    const from = api.requests.length;
    const report = await runReconcile(deps(), { source: SOURCE, window, apply: false, trigger: 'cli' });
    expect(report.run.status).toBe('completed');
    const seen = api.requests.slice(from);
    expect(seen[0]!.status).toBe(429);
    expect(seen[1]!.status).toBe(200);
    expect(seen[1]!.url.toString()).toBe(seen[0]!.url.toString());
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(900);
  });
});

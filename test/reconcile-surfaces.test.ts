import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, type TestDb } from './helpers/db.js';
import { createOrder, SOURCE, workerTestConfig } from './helpers/inbox.js';
import { startFakeGithub, startFakeInvoices, type FakeApi, type HookDeliveryFixture, type InvoiceFixture } from './helpers/provider-apis.js';
import { waitUntil } from './helpers/wait.js';
import { createExampleSchema, orderHandlers } from '../examples/orders/handlers.js';
import { sourceSchema } from '../src/config/source.js';
import { runReconcile } from '../src/reconcile/run.js';
import { startTekil, type RunningTekil } from '../src/runtime.js';

const run = promisify(execFile);
const KEY = 'pk_surfaces';
const TOKEN = 'tk_reconcile_surfaces';
const GITHUB = 'gh-hooks';
const now = Date.now();
const recent = (minutesAgo: number) => new Date(now - minutesAgo * 60_000).toISOString();
const invoices: InvoiceFixture[] = ['inv_a', 'inv_b', 'inv_c'].map((id, i) => ({
  id,
  status: 'paid',
  amount: 4990,
  paid_amount: 4990,
  currency: 'TRY',
  updated_at: recent(30 + i),
  order_id: `ord_${id}`,
}));
/** Newest first at GitHub: guid g2 failed then succeeded on redelivery; g1 and g3 failed; g4 failed but tekil has it. */
const hookDeliveries: HookDeliveryFixture[] = [
  { id: 11, guid: 'g1', delivered_at: recent(50), status_code: 502, event: 'push', action: null },
  { id: 12, guid: 'g2', delivered_at: recent(45), status_code: 0, event: 'issues', action: 'opened' },
  { id: 13, guid: 'g3', delivered_at: recent(40), status_code: 500, event: 'push', action: null },
  { id: 14, guid: 'g4', delivered_at: recent(35), status_code: 504, event: 'push', action: null },
  { id: 15, guid: 'g2', delivered_at: recent(20), status_code: 200, event: 'issues', action: 'opened' },
  { id: 9, guid: 'g0', delivered_at: recent(60 * 24 * 10), status_code: 500, event: 'push', action: null },
];

/** The schedule inside `tekil start`, the admin API, /metrics, and the GitHub adapter. */
describe('reconcile: schedule, admin API, metrics, GitHub', () => {
  let t: TestDb;
  let invoicesApi: FakeApi;
  let github: FakeApi & { redelivered: number[] };
  let running: RunningTekil;
  let dataDir: string;
  const api = async (method: 'GET' | 'POST', path: string, body?: unknown) => {
    const res = await request(`${running.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.body.text();
    return { status: res.statusCode, text, json: () => JSON.parse(text) as Record<string, any> };
  };

  beforeAll(async () => {
    t = await createTestDb();
    invoicesApi = await startFakeInvoices({ key: KEY, invoices: () => invoices });
    github = await startFakeGithub({ key: 'ghp_test', repo: 'acme/shop', hookId: 7, deliveries: () => hookDeliveries });
    dataDir = mkdtempSync(join(tmpdir(), 'tekil-reconcile-surfaces-'));
    await createExampleSchema(t.db);
    for (const inv of invoices) await createOrder(t.db, inv.order_id!);
    await t.db.query(`INSERT INTO inbox_deliveries (source, event_id, event_type, body, status) VALUES ($1, 'g4', 'push', '\\x7b7d', 'done')`, [GITHUB]);
    const config = workerTestConfig(
      {},
      {
        reconcile: {
          provider: 'generic',
          url: `${invoicesApi.url}/v1/invoices`,
          auth: { kind: 'bearer', token: KEY },
          every: '1h',
          lookback: '2h',
          apply: true,
        },
      },
    );
    config.sources[GITHUB] = sourceSchema.parse({
      scheme: 'github',
      secrets: ['gh-webhook-secret'],
      reconcile: { provider: 'github', api_key: 'ghp_test', api_base: github.url, repo: 'acme/shop', hook_id: 7 },
    });
    // A source whose API key is wrong: its scheduled run fails, and says so.
    config.sources['shop-wrong-key'] = sourceSchema.parse({
      scheme: 'paymos',
      secrets: ['whsec_dGVzdA=='],
      reconcile: { provider: 'generic', url: `${invoicesApi.url}/v1/invoices`, auth: { kind: 'bearer', token: 'wrong' }, every: '1h' },
    });
    running = await startTekil({
      config,
      roles: ['receiver', 'worker', 'api'],
      port: 0,
      host: '127.0.0.1',
      logger: pino({ level: 'silent' }),
      db: t.db,
      env: { TEKIL_DATA_DIR: dataDir, TEKIL_ADMIN_TOKEN: TOKEN },
      handlers: orderHandlers({ source: SOURCE }),
    });
  });
  afterAll(async () => {
    await running?.close();
    await invoicesApi?.close();
    await github?.close();
    await t?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('tekil start runs the scheduled reconcile: the missing invoices are recorded and paid once each', async () => {
    const ledger = async () => (await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM example_ledger WHERE kind = 'order_paid'`)).rows[0]!.n;
    await waitUntil(async () => (await ledger()) === 3, 15_000, 'the scheduled run to pay the three orders');
    const runs = () =>
      t.db.query<{ trigger: string; status: string; apply: boolean }>('SELECT trigger, status, apply FROM reconcile_runs WHERE source = $1', [SOURCE]);
    // The deliveries commit page by page; the run is marked completed after its last page.
    await waitUntil(async () => (await runs()).rows[0]?.status === 'completed', 10_000, 'the run to complete');
    expect((await runs()).rows).toEqual([{ trigger: 'schedule', status: 'completed', apply: true }]);
  });

  it('the admin API lists runs and findings by kind and source, and /metrics counts them', async () => {
    const runs = await api('GET', `/api/v1/reconcile/runs?source=${SOURCE}`);
    expect(runs.status).toBe(200);
    expect(runs.json().runs[0]).toMatchObject({ source: SOURCE, status: 'completed', counts: { missing: 3 } });
    const findings = await api('GET', `/api/v1/reconcile/findings?kind=missing&source=${SOURCE}`);
    expect(
      findings
        .json()
        .findings.map((f: { resource_id: string }) => f.resource_id)
        .sort(),
    ).toEqual(['inv_a', 'inv_b', 'inv_c']);
    expect((await api('GET', '/api/v1/reconcile/findings?kind=bogus')).status).toBe(400);
    expect((await api('POST', '/api/v1/reconcile/runs', { source: 'nope', since: recent(60) })).json()).toMatchObject({ error: 'RECONCILE_NOT_CONFIGURED' });
    const metrics = await api('GET', '/metrics');
    expect(metrics.text).toContain(`tekil_reconcile_findings_total{source="${SOURCE}",kind="missing"} 3`);
  });

  it('tekil reconcile --remote runs inside the running tekil, through the admin API', async () => {
    const { stdout } = await run(
      process.execPath,
      [
        '--import',
        'tsx',
        'src/cli/main.ts',
        'reconcile',
        '--remote',
        '--url',
        running.url,
        '--token',
        TOKEN,
        '--source',
        SOURCE,
        '--since',
        recent(120),
        '--json',
      ],
      { env: { ...process.env, TEKIL_LOG_LEVEL: 'silent' } },
    );
    const report = JSON.parse(stdout) as { run: { trigger: string; status: string }; counts: Record<string, number> };
    // The scheduled run already recorded and processed the three invoices.
    expect(report.run).toMatchObject({ trigger: 'api', status: 'completed' });
    expect(report.counts).toEqual({ missing: 0, unprocessed: 0, state: 0, extra: 0 });
  });

  it('a failed scheduled run is stored with its error and listed', async () => {
    await waitUntil(async () => (await api('GET', '/api/v1/reconcile/runs?source=shop-wrong-key')).json().runs.length === 1, 10_000, 'the failed run');
    const run = (await api('GET', '/api/v1/reconcile/runs?source=shop-wrong-key')).json().runs[0];
    expect(run).toMatchObject({ status: 'failed', trigger: 'schedule', pages: 0 });
    expect(run.error).toMatch(/answered 401/);
  });

  it('GitHub: failed deliveries tekil never got are redelivered, once each, and reported', async () => {
    const deps = { db: t.db, config: running.ctx.config, logger: pino({ level: 'silent' }) };
    const window = { start: new Date(now - 2 * 3_600_000), end: null };
    const dry = await runReconcile(deps, { source: GITHUB, window, apply: false, trigger: 'cli' });
    expect(dry.findings.map((f) => [f.kind, f.event_id, f.action])).toEqual([
      ['missing', 'g3', 'none'],
      ['missing', 'g1', 'none'],
    ]);
    expect(github.redelivered).toEqual([]);
    const applied = await runReconcile(deps, { source: GITHUB, window, apply: true, trigger: 'api' });
    expect(applied.findings.map((f) => [f.event_id, f.action])).toEqual([
      ['g3', 'redelivered'],
      ['g1', 'redelivered'],
    ]);
    expect(github.redelivered.sort()).toEqual([11, 13]);
    expect(github.requests.every((r) => r.authorization === 'Bearer ghp_test')).toBe(true);
  });
});

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, type TestContext } from 'vitest';
import { loadConfigFile, parseConfig } from '../src/config/index.js';
import { createLogger } from '../src/logger.js';
import { startTekil, type RunningTekil } from '../src/runtime.js';
import { runProve, type ProveOptions, type ProveReport } from '../src/prove/index.js';
import { createExampleSchema, orderHandlers } from '../examples/orders/handlers.js';
import { ProveControl, startProveEndpoints, type ProveEndpoints } from '../examples/orders/prove-endpoints.js';
import { startReceiverApp, type ReceiverApp } from '../examples/orders/receiver-app.js';
import { createTestDb, type TestDb } from './helpers/db.js';

const SECRET = 'whsec_prove_tekil_test';
const FORWARD_SECRET = 'whsec_cHJvdmUtZm9yd2FyZC1zZWNyZXQtMzItYnl0ZXMh';

/** Timings for a receiver that queues: its effects come after the 2xx, from tekil's worker. */
const timings = {
  providerTimeoutMs: 2_000,
  effectTimeoutMs: 15_000,
  settleMs: 250,
  retryLadderMs: [100, 200, 400, 800, 1_600, 3_200],
  concurrentCopies: 20,
} satisfies Partial<ProveOptions>;

const notPassed = (report: ProveReport) => report.rows.filter((r) => r.status !== 'passed').map((r) => `${r.id} ${r.status}: ${r.message}`);

async function start(t: TestDb, config: Awaited<ReturnType<typeof loadConfigFile>>, control?: ProveControl): Promise<RunningTekil> {
  return startTekil({
    config,
    db: t.db,
    roles: ['receiver', 'worker'],
    port: 0,
    host: '127.0.0.1',
    env: { TEKIL_DATA_DIR: mkdtempSync(join(tmpdir(), 'tekil-prove-')) },
    logger: createLogger({ level: 'silent' }),
    ...(control ? { handlers: orderHandlers({ source: ['shop-paymos', 'shop-paymos-callback'], control }) } : {}),
  });
}

// Each test has its own database (a worker of one tekil would claim the other's deliveries), so
// they run side by side.
describe.concurrent('tekil prove against tekil', () => {
  /** Closes what a test started, last first, when that test ends (not when its neighbour does). */
  const closersFor = (ctx: TestContext) => {
    const closers: (() => Promise<void>)[] = [];
    ctx.onTestFinished(async () => {
      for (const close of closers.reverse()) await close();
    });
    return closers;
  };
  const freshDb = async (closers: (() => Promise<void>)[]): Promise<TestDb> => {
    const t = await createTestDb();
    closers.push(() => t.close());
    await createExampleSchema(t.db);
    return t;
  };

  it('passes every row against examples/orders (in-process handlers), and the shop credited each paid invoice once', async (ctx) => {
    const closers = closersFor(ctx);
    const t = await freshDb(closers);
    const config = await loadConfigFile(new URL('../examples/orders/tekil.yaml', import.meta.url).pathname, { PAYMOS_WEBHOOK_SECRET: SECRET });
    const control = new ProveControl();
    const tekil = await start(t, config, control);
    closers.push(() => tekil.close());
    const endpoints: ProveEndpoints = await startProveEndpoints({ db: t.db, control });
    closers.push(() => endpoints.close());

    const report = await runProve({
      url: `${tekil.url}/in/shop-paymos`,
      // The provider's callback URL: an alias of the same source, so one deduplication covers both.
      callbackUrl: `${tekil.url}/in/shop-paymos/callback`,
      scheme: 'paymos',
      secret: SECRET,
      effectsUrl: `${endpoints.url}/_prove/effects`,
      controlUrl: `${endpoints.url}/_prove`,
      ...timings,
    });
    // The example shop has no kill-next (a killed tekil worker is proved by test/worker-crash.test.ts):
    // that row is skipped and says why.
    expect(notPassed(report)).toEqual([
      expect.stringMatching(/^worker-killed skipped: the receiver does not implement the optional POST .*\/kill-next \(HTTP 404\)/),
    ]);
    expect(report.counts.passed).toBe(14);
    // tekil answers the first request at once; the copy still waits for the provider's timeout, and
    // lands while the handler is held (twice the timeout).
    const busy = report.rows.find((r) => r.id === 'busy-duplicate')!;
    expect(busy.figures).toMatchObject({ provider_timeout_ms: 2_000, slow_ms: 4_000, first: 'HTTP 200' });
    expect(Number(busy.figures.copy_sent_after_ms)).toBeGreaterThanOrEqual(2_000);

    // The database agrees: eleven invoices paid (the four refused requests left nothing), each credited
    // once, paid-again's second invoice.paid included.
    const invoices = await t.db.query<{ id: string; status: string; paid_effects: number }>(
      `SELECT id, status, paid_effects FROM example_invoices WHERE id LIKE $1`,
      [`inv_${report.runId}%`],
    );
    expect(invoices.rows.map((r) => [r.status, Number(r.paid_effects)])).toEqual(Array.from({ length: 11 }, () => ['paid', 1]));
    // The second URL's copies were answered duplicate: every event of the run is stored once, under one source.
    const sources = await t.db.query<{ source: string; n: number }>(
      `SELECT source, count(*)::int AS n FROM inbox_deliveries WHERE event_id LIKE $1 GROUP BY source`,
      [`evt_${report.runId}%`],
    );
    expect(sources.rows.map((r) => r.source)).toEqual(['shop-paymos']);
    // The crash check really crashed a run: one delivery needed a second attempt.
    const retried = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM inbox_deliveries WHERE event_id LIKE $1 AND attempts > 1`, [
      `evt_${report.runId}%`,
    ]);
    expect(retried.rows[0]!.n).toBeGreaterThanOrEqual(1);
    // And the late confirming was judged stale by the ordering guard, not applied.
    const stale = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM inbox_deliveries WHERE event_id LIKE $1 AND status = 'stale'`, [
      `evt_${report.runId}%`,
    ]);
    expect(stale.rows[0]!.n).toBeGreaterThanOrEqual(1);
  }, 90_000);

  it('passes every row against tekil forwarding to a small example app', async (ctx) => {
    const closers = closersFor(ctx);
    const t = await freshDb(closers);
    const app: ReceiverApp = await startReceiverApp({ scheme: 'standard', secrets: [FORWARD_SECRET] });
    closers.push(() => app.close());
    const source = (path: string) => ({
      scheme: 'paymos',
      secrets: [SECRET],
      event_id: 'body:event_id',
      resource_id: 'body:data.invoice_id',
      event_type: 'body:event_type',
      occurred_at: 'body:occurred_at',
      retry: { max_attempts: 12, base: '100ms', cap: '1s' },
      forward: { url: `${app.url}${path}`, secret: FORWARD_SECRET, timeout: '5s' },
      ordering: { state: 'body:data.status', states: ['awaiting_payment', 'confirming'], terminal: ['paid', 'expired'] },
    });
    const config = parseConfig({
      worker: { poll_interval: '50ms' },
      sources: { 'fwd-main': source('/webhooks'), 'fwd-callback': source('/callback') },
    });
    const tekil = await start(t, config);
    closers.push(() => tekil.close());

    const report = await runProve({
      url: `${tekil.url}/in/fwd-main`,
      callbackUrl: `${tekil.url}/in/fwd-callback`,
      scheme: 'paymos',
      secret: SECRET,
      effectsUrl: `${app.url}/_prove/effects`,
      controlUrl: `${app.url}/_prove`,
      ...timings,
    });
    // The example app implements kill-next (its worker killed mid-job, then restarted): every row passes.
    expect(notPassed(report)).toEqual([]);
    expect(report.counts.passed).toBe(15);
    // Every forward tekil made for this run's events is on record as done or stale, none pending or dead.
    const open = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM inbox_deliveries WHERE event_id LIKE $1 AND status NOT IN ('done', 'stale')`, [
      `evt_${report.runId}%`,
    ]);
    expect(open.rows[0]!.n).toBe(0);
  }, 90_000);
});

import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, type TestContext } from 'vitest';
import { parseConfig } from '../src/config/index.js';
import { createLogger } from '../src/logger.js';
import { startTekil, type RunningTekil } from '../src/runtime.js';
import { defineHandlers, type HandlerRegistry } from '../src/worker/handlers.js';
import { runProve, type ProveOptions, type ProveReport } from '../src/prove/index.js';
import { createExampleSchema } from '../examples/orders/handlers.js';
import { applyStandaloneInvoice } from '../examples/orders/invoices.js';
import { ProveControl, startProveEndpoints, type ProveEndpoints } from '../examples/orders/prove-endpoints.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { generateKeyPair } from '../src/signing/ed25519.js';

const MERCHANT_KEY = 'paytr-prove-merchant-key';
const MERCHANT_SALT = 'paytr-prove-merchant-salt';
const IYZICO_SECRET_KEY = 'iyzico-prove-secret-key';

const timings = {
  providerTimeoutMs: 2_000,
  effectTimeoutMs: 15_000,
  settleMs: 250,
  retryLadderMs: [100, 200, 400, 800, 1_600, 3_200],
  concurrentCopies: 20,
} satisfies Partial<ProveOptions>;

const cli = (...args: string[]) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'prove', ...args], (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });

const rowsNot = (report: ProveReport, status: string) => report.rows.filter((r) => r.status !== status).map((r) => `${r.id} ${r.status}: ${r.message}`);

/** tekil with one source, the shop's handler on it, and the shop's prove endpoints; closed when the test ends. */
async function startShop(
  ctx: TestContext,
  source: Record<string, unknown>,
  handler: (control: ProveControl) => HandlerRegistry,
): Promise<{ t: TestDb; tekil: RunningTekil; endpoints: ProveEndpoints }> {
  const closers: (() => Promise<void>)[] = [];
  ctx.onTestFinished(async () => {
    for (const close of closers.reverse()) await close();
  });
  const t = await createTestDb();
  closers.push(() => t.close());
  await createExampleSchema(t.db);
  const control = new ProveControl();
  const config = parseConfig({ worker: { poll_interval: '50ms' }, sources: { shop: { ...source, retry: { max_attempts: 12, base: '100ms', cap: '1s' } } } });
  const tekil = await startTekil({
    config,
    db: t.db,
    roles: ['receiver', 'worker'],
    port: 0,
    host: '127.0.0.1',
    env: { TEKIL_DATA_DIR: mkdtempSync(join(tmpdir(), 'tekil-prove-scheme-')) },
    logger: createLogger({ level: 'silent' }),
    handlers: handler(control),
  });
  closers.push(() => tekil.close());
  const endpoints = await startProveEndpoints({ db: t.db, control });
  closers.push(() => endpoints.close());
  return { t, tekil, endpoints };
}

// Each test has its own database, so they run side by side.
describe('tekil prove --scheme standard with an Ed25519 key (v1a) against tekil', () => {
  it('signs v1a with --secret whsk_…; the receiver holding only the whpk_ key passes signature and rotation', async (ctx) => {
    const pair = generateKeyPair();
    const { tekil, endpoints } = await startShop(ctx, { scheme: 'standard', public_keys: [pair.publicKey] }, (control) =>
      defineHandlers().on<{ data: { id: string; status: string } }>('shop', '*', async (event, hctx) => {
        const { id, status } = event.payload.data;
        await applyStandaloneInvoice(hctx.tx, id, status, event.eventId, control);
        return { resultRef: id };
      }),
    );
    const report = await runProve(
      { url: `${tekil.url}/in/shop`, scheme: 'standard', secret: pair.secretKey, effectsUrl: `${endpoints.url}/_prove/effects`, ...timings },
      { only: ['deliver', 'duplicate', 'signature', 'timestamp', 'rotation'] },
    );
    expect(report.rows.filter((r) => r.status !== 'skipped').map((r) => `${r.id} ${r.status}`)).toEqual([
      'deliver passed',
      'duplicate passed',
      'signature passed',
      'timestamp passed',
      'rotation passed',
    ]);
  }, 120_000);
});

describe.concurrent('tekil prove --scheme paytr | iyzico against tekil', () => {
  it('paytr: sends signed PayTR forms, takes the plain OK as an answer, and passes every row the scheme can carry', async (ctx) => {
    // The shop's handler reads PayTR's form: `success` credits the order once, `failed` is a state it can leave.
    const { t, tekil, endpoints } = await startShop(ctx, { scheme: 'paytr', paytr: { merchant_key: MERCHANT_KEY, merchant_salt: MERCHANT_SALT } }, (control) =>
      defineHandlers().on('shop', '*', async (event, hctx) => {
        const form = new URLSearchParams(event.body.toString('utf8'));
        const oid = form.get('merchant_oid')!;
        await applyStandaloneInvoice(hctx.tx, oid, form.get('status') === 'success' ? 'paid' : 'failed', event.eventId, control);
        return { resultRef: oid };
      }),
    );

    const report = await runProve({
      url: `${tekil.url}/in/shop`,
      scheme: 'paytr',
      secret: MERCHANT_KEY,
      namedSecrets: { salt: MERCHANT_SALT },
      effectsUrl: `${endpoints.url}/_prove/effects`,
      controlUrl: `${endpoints.url}/_prove`,
      ...timings,
    });
    // PayTR signs no timestamp, carries one hash, and this run names no second URL.
    expect(report.rows.filter((r) => r.status === 'skipped').map((r) => r.id)).toEqual(['timestamp', 'rotation', 'worker-killed', 'second-endpoint']);
    expect(rowsNot(report, 'passed').filter((r) => !r.includes('skipped'))).toEqual([]);
    expect(report.counts.passed).toBe(11);
    // The receiver saw PayTR's own merchant_oid (letters and digits): the invoices prove created, each credited once.
    const invoices = await t.db.query<{ status: string; paid_effects: number }>(`SELECT status, paid_effects FROM example_invoices WHERE id LIKE $1`, [
      `inv${report.runId}%`,
    ]);
    expect(invoices.rows.length).toBeGreaterThan(0);
    expect(invoices.rows.every((r) => r.status === 'paid' && Number(r.paid_effects) === 1)).toBe(true);

    // The command: --secret is the merchant_key, --named-secret salt=… the merchant_salt.
    const target = ['--url', `${tekil.url}/in/shop`, '--scheme', 'paytr', '--secret', MERCHANT_KEY, '--effects', `${endpoints.url}/_prove/effects`];
    const fast = ['--settle', '150ms', '--effect-timeout', '10s', '--provider-timeout', '2s'];
    const run = await cli(...target, '--named-secret', `salt=${MERCHANT_SALT}`, ...fast, '--only', 'deliver,duplicate,signature', '--json');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const cliReport = JSON.parse(run.stdout) as { rows: { id: string; status: string }[] };
    expect(cliReport.rows.filter((r) => r.status !== 'skipped').map((r) => `${r.id} ${r.status}`)).toEqual([
      'deliver passed',
      'duplicate passed',
      'signature passed',
    ]);
    // Without the salt nothing is sent: a coded error naming the option.
    const noSalt = await cli(...target, ...fast, '--only', 'deliver');
    expect(noSalt.code).not.toBe(0);
    expect(noSalt.stderr).toContain('--named-secret salt=');
  }, 120_000);
  it('iyzico: sends signed direct notifications (X-IYZ-SIGNATURE-V3) and passes every row the scheme can carry', async (ctx) => {
    // iyzico's payment words: SUCCESS credits the payment (paymentId = the invoice) once, the others are states.
    const states: Record<string, string> = { SUCCESS: 'paid', FAILURE: 'failed', INIT_THREEDS: 'confirming', CALLBACK_THREEDS: 'underpaid_waiting' };
    const { t, tekil, endpoints } = await startShop(ctx, { scheme: 'iyzico', iyzico: { secret_key: IYZICO_SECRET_KEY } }, (control) =>
      defineHandlers().on<{ paymentId: string; status: string }>('shop', '*', async (event, hctx) => {
        const { paymentId, status } = event.payload;
        await applyStandaloneInvoice(hctx.tx, paymentId, states[status] ?? status, event.eventId, control);
        return { resultRef: paymentId };
      }),
    );
    const report = await runProve({
      url: `${tekil.url}/in/shop`,
      scheme: 'iyzico',
      secret: IYZICO_SECRET_KEY,
      effectsUrl: `${endpoints.url}/_prove/effects`,
      controlUrl: `${endpoints.url}/_prove`,
      ...timings,
    });
    expect(report.rows.filter((r) => r.status === 'skipped').map((r) => r.id)).toEqual(['timestamp', 'rotation', 'worker-killed', 'second-endpoint']);
    expect(rowsNot(report, 'passed').filter((r) => !r.includes('skipped'))).toEqual([]);
    expect(report.counts.passed).toBe(11);
    const invoices = await t.db.query<{ status: string; paid_effects: number }>(`SELECT status, paid_effects FROM example_invoices WHERE id LIKE $1`, [
      `inv\\_${report.runId}%`,
    ]);
    expect(invoices.rows.length).toBeGreaterThan(0);
    expect(invoices.rows.every((r) => r.status === 'paid' && Number(r.paid_effects) === 1)).toBe(true);

    const run = await cli(
      '--url',
      `${tekil.url}/in/shop`,
      '--scheme',
      'iyzico',
      '--secret',
      IYZICO_SECRET_KEY,
      '--effects',
      `${endpoints.url}/_prove/effects`,
      '--settle',
      '150ms',
      '--only',
      'deliver,signature',
      '--json',
    );
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
  }, 120_000);
});

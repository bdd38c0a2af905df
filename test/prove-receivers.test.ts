import { afterAll, describe, expect, it } from 'vitest';
import { startReceiverApp, type ReceiverApp } from '../examples/orders/receiver-app.js';
import { runProve, type CheckId, type ProveOptions, type ProveReport } from '../src/prove/index.js';
import { hmacSchemeOptions, type HmacSchemeOptions, type SchemeName } from '../src/signing/index.js';
import { startBrokenReceiver, type BrokenReceiverBug } from './fixtures/broken-receivers/index.js';

const SECRET = 'whsec_prove_receivers_test';

/** Compressed timings: the receivers here answer synchronously and in memory. */
function optionsFor(app: ReceiverApp, scheme: SchemeName = 'paymos', secret = SECRET, hmac?: HmacSchemeOptions): ProveOptions {
  return {
    ...(hmac ? { hmac } : {}),
    url: `${app.url}/webhooks`,
    callbackUrl: `${app.url}/callback`,
    scheme,
    secret,
    effectsUrl: `${app.url}/_prove/effects`,
    controlUrl: `${app.url}/_prove`,
    providerTimeoutMs: 2_000,
    effectTimeoutMs: 3_000,
    settleMs: 200,
    retryLadderMs: [100, 200, 400, 800, 1_600],
    concurrentCopies: 20,
  };
}

const failing = (report: ProveReport): CheckId[] => report.rows.filter((r) => r.status === 'failed').map((r) => r.id);
const row = (report: ProveReport, id: CheckId) => report.rows.find((r) => r.id === id);

/** Per bug: exactly the rows that must fail, and what each failing row's message must name. */
const expected: Record<BrokenReceiverBug, Partial<Record<CheckId, RegExp>>> = {
  'dedupes-on-resource': { 'same-resource': /deduplicates on the resource id/, reconcile: /\(same-resource\)/ },
  'no-dedupe': {
    duplicate: /does not deduplicate on the event id/,
    concurrent: /does not deduplicate on the event id/,
    'busy-duplicate': /does not deduplicate copies that arrive during processing/,
    'paid-again': /has no second lock/,
    'replay-after-fix': /replaying the event a second time, with the same event id, the effect ran 2 times/,
    'second-endpoint': /not on the event id/,
    reconcile: /\(duplicate\)/,
  },
  'first-v1-only': { rotation: /checks only the first v1 signature/, reconcile: /\(rotation\)/ },
  'processed-before-commit': {
    crash: /marks the event processed before its work commits/,
    'worker-killed': /its effect never ran: the job was lost with the worker/,
    'replay-after-fix': /the replay was taken for a duplicate/,
    reconcile: /\(crash\)/,
  },
  'ignores-timestamp': { timestamp: /ignores the signed timestamp/, reconcile: /\(timestamp\)/ },
  'skips-signature': { signature: /does not verify the signature/, reconcile: /\(signature\)/ },
  'applies-in-arrival-order': { order: /applies events in arrival order/, reconcile: /\(order\) ran once, state confirming; expected once in paid/ },
  // The hidden one: a receiver without the conditional update passed every other row.
  'no-conditional-update': {
    'paid-again': /invoice.paid under a new event id for an invoice already paid ran 2 times: the receiver has no second lock/,
    reconcile: /\(paid-again\) ran 2 times/,
  },
  'killed-work-kept': {
    'worker-killed': /after its worker was killed mid-job, the effect ran 2 times/,
    reconcile: /\(worker-killed\) ran 2 times/,
  },
};

// Each test has receivers of its own, so the two run side by side.
// Nothing here touches tekil's store (the receivers keep their own effects), so the store projects
// would run the same child processes twice: only the PGlite project runs them.
describe.skipIf(process.env.TEKIL_TEST_STORE === 'postgres')('tekil prove against receivers written by hand', { concurrent: true }, () => {
  const apps: ReceiverApp[] = [];
  afterAll(async () => {
    await Promise.all(apps.map((a) => a.close()));
  });

  it('passes every row against a correct receiver, and fails exactly the rows of each broken one, naming the bug', async () => {
    const correct = await startReceiverApp({ scheme: 'paymos', secrets: [SECRET] });
    apps.push(correct);
    const bugs = Object.keys(expected) as BrokenReceiverBug[];
    const broken = await Promise.all(bugs.map((bug) => startBrokenReceiver(bug, SECRET)));
    apps.push(...broken);

    // Independent receivers, so the runs go side by side.
    const [good, ...bad] = await Promise.all([correct, ...broken].map((app) => runProve(optionsFor(app))));
    const goodReport = good as ProveReport;
    expect(goodReport.rows.filter((r) => r.status !== 'passed').map((r) => `${r.id}: ${r.message}`)).toEqual([]);
    expect(goodReport.ok).toBe(true);
    expect(goodReport.counts).toEqual({ passed: 15, failed: 0, skipped: 0 });
    // The copy of busy-duplicate lands after the provider's timeout, while the first run is still held.
    expect(row(goodReport, 'busy-duplicate')?.figures).toMatchObject({ provider_timeout_ms: 2_000, slow_ms: 4_000 });
    expect(Number(row(goodReport, 'busy-duplicate')?.figures.copy_sent_after_ms)).toBeGreaterThanOrEqual(2_000);

    bugs.forEach((bug, i) => {
      const report = bad[i] as ProveReport;
      const want = expected[bug];
      expect({ bug, failing: failing(report) }).toEqual({ bug, failing: Object.keys(want) });
      for (const [id, pattern] of Object.entries(want) as [CheckId, RegExp][]) {
        expect(row(report, id)?.message, `${bug} / ${id}`).toMatch(pattern);
      }
      expect(report.ok).toBe(false);
      expect(report.counts.skipped).toBe(0);
    });
  }, 60_000);

  it('worker-killed: skipped, saying why, without --control or when the receiver has no kill-next', async () => {
    const app = await startReceiverApp({ scheme: 'paymos', secrets: [SECRET] });
    apps.push(app);
    const { controlUrl: _unused, ...noControl } = optionsFor(app);
    const without = await runProve(noControl, { only: ['worker-killed'] });
    expect(row(without, 'worker-killed')).toMatchObject({ status: 'skipped', message: expect.stringContaining('needs --control (kill-next)') });
    // A control base where nothing answers kill-next (404): the optional action is not implemented.
    const elsewhere = await runProve({ ...optionsFor(app), controlUrl: `${app.url}/_elsewhere` }, { only: ['worker-killed'] });
    expect(row(elsewhere, 'worker-killed')).toMatchObject({
      status: 'skipped',
      message: expect.stringMatching(/does not implement the optional POST .*\/_elsewhere\/kill-next \(HTTP 404\)/),
    });
    expect(elsewhere.ok).toBe(true);
  }, 60_000);

  it('speaks each scheme as its provider does: a correct receiver passes on stripe, standard, github, shopify and hmac', async () => {
    const standardSecret = 'whsec_cHJvdmUtc3RhbmRhcmQtc2NoZW1lLXNlY3JldCE=';
    // A provider described by hand: timestamped, several signatures per header during a rotation.
    const hmac = hmacSchemeOptions.parse({
      signature_header: 'x-signature',
      prefix: 'sha256=',
      separator: ',',
      signed_payload: '{timestamp}.{body}',
      timestamp_header: 'x-timestamp',
      id_header: 'x-event-id',
    });
    const schemes: [SchemeName, string, HmacSchemeOptions?][] = [
      ['stripe', SECRET],
      ['standard', standardSecret],
      ['github', SECRET],
      ['shopify', SECRET],
      ['hmac', SECRET, hmac],
    ];
    const started = await Promise.all(
      schemes.map(([scheme, secret, options]) => startReceiverApp({ scheme, secrets: [secret], ...(options ? { hmac: options } : {}) })),
    );
    apps.push(...started);
    const reports = await Promise.all(started.map((app, i) => runProve(optionsFor(app, ...(schemes[i] as [SchemeName, string, HmacSchemeOptions?])))));
    const summary = reports.map((r, i) => ({
      scheme: schemes[i]?.[0],
      notPassed: r.rows.filter((x) => x.status !== 'passed').map((x) => `${x.id} ${x.status}`),
      failed: r.counts.failed,
    }));
    // GitHub and Shopify sign no timestamp and carry one signature: those two rows are skipped, not passed.
    expect(summary).toEqual([
      { scheme: 'stripe', notPassed: [], failed: 0 },
      { scheme: 'standard', notPassed: [], failed: 0 },
      { scheme: 'github', notPassed: ['timestamp skipped', 'rotation skipped'], failed: 0 },
      { scheme: 'shopify', notPassed: ['timestamp skipped', 'rotation skipped'], failed: 0 },
      { scheme: 'hmac', notPassed: [], failed: 0 },
    ]);
  }, 60_000);
});

import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReceiverApp, type ReceiverApp } from '../examples/orders/receiver-app.js';
import { startBrokenReceiver } from './fixtures/broken-receivers/index.js';

const SECRET = 'whsec_prove_cli_test';

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

const cli = (...args: string[]) =>
  new Promise<CliRun>((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'prove', ...args], (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });

/** A port nothing listens on: bound, noted, closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const fast = ['--settle', '150ms', '--effect-timeout', '3s', '--provider-timeout', '2s'];
const target = (app: ReceiverApp) => [
  '--url',
  `${app.url}/webhooks`,
  '--scheme',
  'paymos',
  '--secret',
  SECRET,
  '--effects',
  `${app.url}/_prove/effects`,
  ...fast,
];

// Each test has its own receiver, so they run side by side (each is mostly waiting on a child process).
// Nothing here touches tekil's store (the receivers keep their own effects), so the store projects
// would run the same child processes twice: only the PGlite project runs them.
describe.skipIf(process.env.TEKIL_TEST_STORE === 'postgres')('tekil prove (the command)', { concurrent: true }, () => {
  let good: ReceiverApp;
  let noDedupe: ReceiverApp;
  let untouched: ReceiverApp;
  beforeAll(async () => {
    [good, noDedupe, untouched] = await Promise.all([
      startReceiverApp({ scheme: 'paymos', secrets: [SECRET] }),
      startBrokenReceiver('no-dedupe', SECRET),
      startReceiverApp({ scheme: 'paymos', secrets: [SECRET] }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([good?.close(), noDedupe?.close(), untouched?.close()]);
  });

  it('--json and --junit report every row; checks that need --control or --callback-url are skipped, never passed; exit 0', async () => {
    const junit = join(mkdtempSync(join(tmpdir(), 'tekil-prove-cli-')), 'report.xml');
    const run = await cli(...target(good), '--only', 'deliver,duplicate,busy-duplicate,signature,crash,second-endpoint,reconcile', '--json', '--junit', junit);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as {
      ok: boolean;
      counts: Record<string, number>;
      rows: { id: string; status: string; figures: object; fix: string }[];
    };
    expect(report.ok).toBe(true);
    const statuses = Object.fromEntries(report.rows.map((r) => [r.id, r.status]));
    expect(statuses).toEqual({
      deliver: 'passed',
      duplicate: 'passed',
      concurrent: 'skipped',
      'busy-duplicate': 'skipped',
      'same-resource': 'skipped',
      'paid-again': 'skipped',
      order: 'skipped',
      signature: 'passed',
      timestamp: 'skipped',
      rotation: 'skipped',
      crash: 'skipped',
      'worker-killed': 'skipped',
      'replay-after-fix': 'skipped',
      'second-endpoint': 'skipped',
      reconcile: 'passed',
    });
    // Chosen but unable to run: skipped with the reason, never passed.
    expect(report.rows.find((r) => r.id === 'busy-duplicate')).toMatchObject({ message: expect.stringContaining('needs --control') });
    expect(report.rows.find((r) => r.id === 'second-endpoint')).toMatchObject({ message: expect.stringContaining('needs --callback-url') });
    expect(report.rows.find((r) => r.id === 'order')).toMatchObject({ message: 'not chosen (--only / --skip)' });
    expect(report.rows.find((r) => r.id === 'crash')).toMatchObject({ status: 'skipped', message: expect.stringContaining('needs --control') });
    const xml = readFileSync(junit, 'utf8');
    expect(xml.match(/<testcase /g)).toHaveLength(15);
    expect(xml).toContain('failures="0" skipped="11"');
    expect(xml.match(/<skipped /g)).toHaveLength(11);
  }, 60_000);

  it('a failing row: the table names the bug and the fix, exit code 1', async () => {
    const run = await cli(...target(noDedupe), '--only', 'duplicate,reconcile');
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^FAILED\s+duplicate\s+.*does not deduplicate on the event id/m);
    expect(run.stdout).toMatch(/fix: Providers resend deliveries/);
    expect(run.stdout).toMatch(/^SKIPPED\s+deliver\s+not chosen/m);
    expect(run.stdout).toMatch(/NOT PROVED: 0 passed, 2 failed, 13 skipped/);
    // Not a terminal: no colour codes.
    expect(run.stdout).not.toContain('\x1b[');
  }, 60_000);

  it('an effects URL nobody answers stops the run with a clear error before anything is sent or scored', async () => {
    const port = await closedPort();
    const run = await cli(
      '--url',
      `${untouched.url}/webhooks`,
      '--scheme',
      'paymos',
      '--secret',
      SECRET,
      '--effects',
      `http://127.0.0.1:${port}/_prove/effects`,
    );
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(
      /^tekil: PROVE_EFFECTS_UNREACHABLE: cannot read the effects at http:\/\/127\.0\.0\.1:\d+\/_prove\/effects: .*\(hint: start the receiver/,
    );
    // Nothing was sent: the receiver saw no invoice at all.
    expect(await (await fetch(`${untouched.url}/_prove/effects`)).json()).toEqual({});
  }, 30_000);

  it('effects that break the contract, and unknown check ids, are coded errors', async () => {
    const [badEffects, badId] = await Promise.all([
      cli('--url', `${untouched.url}/webhooks`, '--scheme', 'paymos', '--secret', SECRET, '--effects', `${untouched.url}/webhooks`),
      cli(...target(untouched), '--only', 'duplicate,replay'),
    ]);
    expect(badEffects.code).toBe(1);
    expect(badEffects.stderr).toMatch(/^tekil: PROVE_EFFECTS_UNREACHABLE: the effects at .* answered HTTP 404/);
    expect(badId.code).toBe(1);
    expect(badId.stderr).toMatch(/^tekil: VALIDATION_FAILED: --only: unknown check "replay" \(hint: checks: deliver, duplicate/);
  }, 30_000);
});

import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres, createTestDb, type TestDb } from './helpers/db.js';
import { startSink, type Sink } from './helpers/sink.js';
import { verify as verifyGithub } from '@octokit/webhooks-methods';
import { createScheme } from '../src/signing/index.js';

interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** `tekil simulate` as a user runs it: a real process against a receiver that records what it gets. */
describe('tekil simulate (CLI)', () => {
  let sink: Sink;
  let t: TestDb | undefined;
  let dataDir: string;
  const cli = (...args: string[]) =>
    new Promise<CliRun>((resolve) => {
      execFile(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'simulate', ...args], { env: process.env }, (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      });
    });

  beforeAll(async () => {
    sink = await startSink();
    dataDir = mkdtempSync(join(tmpdir(), 'tekil-simulate-cli-'));
    if (onPostgres) t = await createTestDb();
  });
  afterAll(async () => {
    await sink?.close();
    await t?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('walks the invoices, signs every request with the secret it prints, and summarises as JSON', async () => {
    const store = t?.url ? ['--database-url', t.url, '--data-dir', dataDir] : ['--data-dir', dataDir];
    const run = await cli(
      '--target',
      `${sink.url}/hooks`,
      '--invoices',
      '30',
      '--faults',
      'duplicate=0.2,reorder=0.3,rotate',
      '--time-scale',
      '0.001',
      // Long enough that no delivery times out and is sent again on a loaded machine: the count of
      // requests below is exact (one per event, plus the proxy's duplicates).
      '--timeout',
      '10s',
      '--port',
      '0',
      '--seed',
      '7',
      '--json',
      ...store,
    );
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const summary = JSON.parse(run.stdout) as {
      invoices: number;
      eventsPublished: number;
      secret: string;
      listUrl: string;
      deliveries: Record<string, { deliveries: number }>;
      proxies: { target: { duplicated: number } };
    };
    expect(summary.invoices).toBe(30);
    expect(summary.deliveries.succeeded!.deliveries).toBe(summary.eventsPublished);
    expect(summary.listUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1\/invoices$/);
    // Every request the receiver got verifies with the printed (first) secret under the Paymos scheme;
    // after the halfway rotation the header carries the new signature beside the old one.
    const paymos = createScheme('paymos');
    expect(sink.requests.length).toBe(summary.eventsPublished + summary.proxies.target.duplicated);
    for (const req of sink.requests) {
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
      expect(() => paymos.verify({ body: req.body, headers, secrets: [summary.secret], toleranceSec: 300 })).not.toThrow();
      const body = JSON.parse(req.body.toString()) as { event_id: string; event_type: string; data: { invoice_id: string; status: string; amount: string } };
      // Paymos' own envelope, not tekil's: exactly its fields, and the id the header carries.
      expect(Object.keys(body)).toEqual(['event_id', 'event_type', 'version', 'occurred_at', 'data']);
      expect(body.event_id).toBe(req.headers['x-webhook-id']);
      expect(body.event_type).toBe(`invoice.${body.data.status}`);
      expect(body.data.amount).toMatch(/^\d+\.\d{2}$/);
    }
    const signatureCounts = sink.requests.map((r) => (String(r.headers['x-webhook-signature']).match(/v1=/g) ?? []).length);
    expect(signatureCounts.filter((n) => n === 1).length).toBeGreaterThan(0);
    expect(signatureCounts.filter((n) => n === 2).length).toBeGreaterThan(0);
  }, 60_000);

  it('--scheme github: every request verifies with @octokit/webhooks-methods and names its event', async () => {
    const github = await startSink();
    try {
      const store = t?.url ? ['--database-url', t.url, '--data-dir', dataDir] : ['--data-dir', dataDir];
      const run = await cli(
        '--target',
        `${github.url}/hooks`,
        '--scheme',
        'github',
        '--invoices',
        '5',
        '--time-scale',
        '0.001',
        '--timeout',
        '2s',
        '--port',
        '0',
        '--seed',
        '3',
        '--json',
        ...store,
      );
      expect(run.stderr).toBe('');
      const summary = JSON.parse(run.stdout) as { eventsPublished: number; secret: string };
      expect(github.requests).toHaveLength(summary.eventsPublished);
      for (const req of github.requests) {
        expect(await verifyGithub(summary.secret, req.body.toString('utf8'), String(req.headers['x-hub-signature-256']))).toBe(true);
        const body = JSON.parse(req.body.toString()) as { id: string; type: string };
        expect(req.headers['x-github-event']).toBe(body.type);
        expect(req.headers['x-github-delivery']).toBe(body.id);
      }
    } finally {
      await github.close();
    }
  }, 60_000);

  it('while the tail settles, a progress line on stderr; the step lines stay on stdout', async () => {
    const slow = await startSink(() => ({ status: 204, delayMs: 100 }));
    process.env.TEKIL_PROGRESS_INTERVAL = '1'; // a plain line as soon as there is something to say
    try {
      const store = t?.url ? ['--database-url', t.url, '--data-dir', dataDir] : ['--data-dir', dataDir];
      const run = await cli(
        '--target',
        `${slow.url}/hooks`,
        '--invoices',
        '10',
        '--concurrency',
        '1',
        '--time-scale',
        '0.001',
        '--timeout',
        '2s',
        '--port',
        '0',
        '--seed',
        '5',
        ...store,
      );
      expect(run.code).toBe(0);
      // Not a terminal: plain lines, no escape codes.
      expect(run.stderr).toMatch(/^simulate settled \d+\/\d+ deliveries \d+% /m);
      expect(run.stderr).not.toContain('\x1b[');
      expect(run.stdout).toMatch(/^every delivery settled$/m);
      expect(run.stdout).not.toMatch(/simulate settled/);
    } finally {
      delete process.env.TEKIL_PROGRESS_INTERVAL;
      await slow.close();
    }
  }, 120_000);

  it('a fault list it cannot read is one line with a hint', async () => {
    const run = await cli('--target', `${sink.url}/hooks`, '--faults', 'lose=0.5', '--data-dir', dataDir);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      'tekil: VALIDATION_FAILED: --faults: cannot read "lose=0.5" (hint: use drop=<0..1>,delay=<0..1>,duplicate=<0..1>,reorder=<0..1>,replay=<0..1>,rotate — or all, or none)\n',
    );
  });
});

import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../src/store/db.js';
import { createTestDb, onPostgres, type TestDb } from './helpers/db.js';
import { startFakeStripe, type FakeApi, type StripeEventFixture } from './helpers/provider-apis.js';
import { waitUntil } from './helpers/wait.js';

const KEY = 'sk_test_progress';
const created = Math.floor(Date.parse('2026-11-28T12:00:00Z') / 1000);
// Ten pages of a hundred, a page every 300 ms: long enough to be interrupted mid-way.
const events: StripeEventFixture[] = Array.from({ length: 1000 }, (_, i) => ({
  id: `evt_p${String(i).padStart(4, '0')}`,
  type: 'invoice.paid',
  created: created + i,
  data: { object: { id: `in_p${i}`, object: 'invoice' } },
}));

/** `tekil reconcile` over many provider pages: a progress line, and Ctrl-C that leaves a resumable run. */
describe('CLI: tekil reconcile progress and Ctrl-C', () => {
  let t: TestDb;
  let stripe: FakeApi;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  const start = (...args: string[]) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'reconcile', '--config', join(dir, 'tekil.yaml'), ...args], { env });
    const out = { stdout: '', stderr: '' };
    child.stdout.on('data', (b: Buffer) => (out.stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (out.stderr += b.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    return { child, out, exited };
  };

  beforeAll(async () => {
    stripe = await startFakeStripe({ key: KEY, events: () => events });
    dir = mkdtempSync(join(tmpdir(), 'tekil-reconcile-progress-'));
    writeFileSync(
      join(dir, 'tekil.yaml'),
      `sources:\n  stripe:\n    scheme: stripe\n    secrets: ["whsec_cli"]\n    reconcile:\n      provider: stripe\n      api_key: \${STRIPE_KEY}\n      api_base: ${stripe.url}\n      page_interval: 300ms\n`,
    );
    env = { ...process.env, STRIPE_KEY: KEY, TEKIL_DATA_DIR: join(dir, 'data'), TEKIL_LOG_LEVEL: 'silent', TEKIL_PROGRESS_INTERVAL: '100' };
    delete env.DATABASE_URL;
    t = await createTestDb();
    if (onPostgres) {
      env.DATABASE_URL = t.url;
    } else {
      mkdirSync(join(dir, 'data'), { recursive: true });
      const dump = await (t.db as Db & { dump(): Promise<Uint8Array> }).dump();
      const seeded = new PGlite(join(dir, 'data', 'pgdata'), { loadDataDir: new Blob([dump]) });
      await seeded.waitReady;
      await seeded.close();
    }
  });
  afterAll(async () => {
    await stripe?.close();
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('prints plain progress lines off a terminal, stops on Ctrl-C with the cursor, and the printed command resumes', { timeout: 180_000 }, async () => {
    const first = start('--source', 'stripe', '--since', '2026-11-28T00:00Z');
    await waitUntil(() => /reconcile [1-9]\d* items [\d.]+\/s at page \d+ cursor evt_p\d+/.test(first.out.stderr), 90_000, 'a progress line').catch(
      (err: unknown) => {
        throw new Error(`${String(err)}; stderr: ${first.out.stderr}; stdout: ${first.out.stdout.slice(0, 500)}`);
      },
    );
    first.child.kill('SIGINT');
    expect(await first.exited).toBe(130);
    expect(first.out.stdout).toBe('');
    const stopped = /interrupted: reconcile run (\S+) stopped at cursor (evt_p\d+) after (\d+) items/.exec(first.out.stderr);
    expect(stopped, first.out.stderr).not.toBeNull();
    const resume = /to resume from that cursor: tekil reconcile (.+)\n/.exec(first.out.stderr)![1]!.split(' ');
    expect(resume.slice(0, 3)).toEqual(['--source', 'stripe', '--since']);
    if (!onPostgres) return; // the embedded store: one run is enough (each process opens it anew, seconds each)
    const { rows } = await t.db.query<{ status: string; cursor: string; error: string }>('SELECT status, cursor, error FROM reconcile_runs WHERE id = $1', [
      stopped![1],
    ]);
    expect(rows[0]).toEqual({ status: 'failed', cursor: stopped![2], error: 'interrupted' });

    const again = start(...resume, '--json');
    expect(await again.exited).toBe(0);
    expect(again.out.stderr).not.toMatch(/reconcile \d/); // --json: no progress
    const report = JSON.parse(again.out.stdout) as { run: { id: number; status: string; items: number }; counts: Record<string, number> };
    expect(report.run).toMatchObject({ id: Number(stopped![1]), status: 'completed', items: 1000 });
    expect(report.counts.missing).toBe(1000);
  });
});

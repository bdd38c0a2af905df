import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, onPostgres, type TestDb } from './helpers/db.js';
import type { Db } from '../src/store/db.js';
import { startFakeStripe, type FakeApi, type StripeEventFixture } from './helpers/provider-apis.js';

const run = promisify(execFile);
const KEY = 'sk_test_cli';
const created = Math.floor(Date.parse('2026-11-28T12:00:00Z') / 1000);
const events: StripeEventFixture[] = ['evt_c1', 'evt_c2', 'evt_c3'].map((id, i) => ({
  id,
  type: 'invoice.paid',
  created: created + i,
  data: { object: { id: `in_${id}`, object: 'invoice' } },
}));

/**
 * `tekil reconcile` as an operator runs it: a real process, on the store from DATABASE_URL (Postgres
 * project) or the embedded one in TEKIL_DATA_DIR (PGlite project), with no tekil running.
 */
describe('CLI: tekil reconcile', () => {
  let t: TestDb;
  let stripe: FakeApi;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  const cli = async (...args: string[]) => {
    try {
      const { stdout, stderr } = await run(
        process.execPath,
        ['--import', 'tsx', 'src/cli/main.ts', 'reconcile', '--config', join(dir, 'tekil.yaml'), ...args],
        { env },
      );
      return { code: 0, stdout, stderr };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  };

  beforeAll(async () => {
    stripe = await startFakeStripe({ key: KEY, events: () => events });
    dir = mkdtempSync(join(tmpdir(), 'tekil-reconcile-cli-'));
    writeFileSync(
      join(dir, 'tekil.yaml'),
      `sources:\n  stripe:\n    scheme: stripe\n    secrets: ["whsec_cli"]\n    reconcile:\n      provider: stripe\n      api_key: \${STRIPE_KEY}\n      api_base: ${stripe.url}\n`,
    );
    env = { ...process.env, STRIPE_KEY: KEY, TEKIL_DATA_DIR: join(dir, 'data'), TEKIL_LOG_LEVEL: 'silent' };
    delete env.DATABASE_URL;
    t = await createTestDb();
    if (onPostgres) {
      env.DATABASE_URL = t.url;
    } else {
      // The embedded store as `tekil migrate` leaves it, copied from the suite's migrated one:
      // creating one from nothing in the CLI's process would take most of the test's time.
      mkdirSync(join(dir, 'data'), { recursive: true });
      const dump = await (t.db as Db & { dump(): Promise<Uint8Array> }).dump();
      const seeded = new PGlite(join(dir, 'data', 'pgdata'), { loadDataDir: new Blob([dump]) });
      await seeded.waitReady;
      await seeded.close();
    }
  });
  const count = async (sql: string) => (await t.db.query<{ n: number }>(sql)).rows[0]!.n;
  afterAll(async () => {
    await stripe?.close();
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  // Each process opens the store anew, and the embedded one takes seconds to: one run on it, the rest on Postgres.
  it.runIf(!onPostgres)('on the embedded store: --apply records the missing events', { timeout: 120_000 }, async () => {
    const applied = await cli('--source', 'stripe', '--since', '2026-11-28T00:00Z', '--apply', '--json');
    expect(applied.code).toBe(0);
    const report = JSON.parse(applied.stdout) as { counts: Record<string, number>; findings: Array<{ event_id: string; action: string }> };
    expect(report.counts).toEqual({ missing: 3, unprocessed: 0, state: 0, extra: 0 });
    expect(report.findings.map((f) => [f.event_id, f.action]).sort()).toEqual(events.map((e) => [e.id, 'recorded']));
  });

  it.runIf(onPostgres)('reports without changing anything, records with --apply, and lists stored findings', { timeout: 120_000 }, async () => {
    const dry = await cli('--source', 'stripe', '--since', '2026-11-28T00:00Z', '--json');
    expect(dry.code).toBe(0);
    const report = JSON.parse(dry.stdout) as { counts: Record<string, number>; findings: Array<{ event_id: string; action: string }> };
    expect(report.counts).toEqual({ missing: 3, unprocessed: 0, state: 0, extra: 0 });
    expect(report.findings.every((f) => f.action === 'none')).toBe(true);
    expect(await count('SELECT count(*)::int AS n FROM inbox_deliveries')).toBe(0);

    const applied = await cli('--source', 'stripe', '--since', '2026-11-28T00:00Z', '--apply');
    expect(applied.code).toBe(0);
    expect(applied.stdout).toMatch(/missing 3 {2}unprocessed 0 {2}state 0 {2}extra 0/);
    expect(applied.stdout.match(/recorded/g)).toHaveLength(3);
    expect(await count(`SELECT count(*)::int AS n FROM inbox_deliveries WHERE headers ? 'x-tekil-reconcile'`)).toBe(3);
    // The change made on the store itself is audited (the dry run before it is not).
    expect(
      await count(
        `SELECT count(*)::int AS n FROM audit_events WHERE method = 'CLI' AND route = 'tekil reconcile --apply' AND status = 200 AND actor LIKE 'cli:%' AND target->>'source' = 'stripe'`,
      ),
    ).toBe(1);

    // No worker ran: the recorded events wait in the inbox, so they are unprocessed now, with the replay command.
    const after = await cli('--source', 'stripe', '--since', '2026-11-28T00:00Z', '--json');
    const again = JSON.parse(after.stdout) as { counts: Record<string, number>; findings: Array<{ detail: string }> };
    expect(again.counts).toEqual({ missing: 0, unprocessed: 3, state: 0, extra: 0 });
    expect(again.findings[0]!.detail).toMatch(/^tekil inbox replay stripe evt_c\d$/);

    const listed = await cli('--findings', 'missing', '--source', 'stripe', '--json');
    expect((JSON.parse(listed.stdout) as unknown[]).length).toBe(6);
  });

  it('a source without a reconcile block is one coded line', async () => {
    const res = await cli('--source', 'nope', '--since', '72h');
    expect(res.code).toBe(1);
    expect(res.stderr.trim()).toBe(
      'tekil: RECONCILE_NOT_CONFIGURED: no source "nope" is configured (hint: add reconcile: { provider: stripe | generic | github | paytr | iyzico, … } to the source (docs/reconcile.md))',
    );
  });
  it.runIf(onPostgres)('a run of the source in progress elsewhere: one coded line, nothing run', async () => {
    const { rows } = await t.db.query<{ id: string }>(
      `INSERT INTO reconcile_runs (source, provider, window_start, apply, trigger, status) VALUES ('stripe', 'stripe', now(), false, 'api', 'running') RETURNING id`,
    );
    try {
      const res = await cli('--source', 'stripe', '--since', '72h');
      expect(res.code).toBe(1);
      expect(res.stderr.trim()).toMatch(
        new RegExp(`^tekil: RECONCILE_RUNNING: reconcile run ${rows[0]!.id} of source "stripe" is in progress \\(started .*\\) \\(hint: wait for it to finish`),
      );
      expect(await count('SELECT count(*)::int AS n FROM reconcile_runs')).toBe(4);
    } finally {
      await t.db.query(`UPDATE reconcile_runs SET status = 'completed' WHERE id = $1`, [rows[0]!.id]);
    }
  });
});

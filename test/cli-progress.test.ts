import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatProgress, Progress, type ProgressStream } from '../src/cli/progress.js';
import { publish } from '../src/outbox/publish.js';
import { startTekil, type RunningTekil } from '../src/runtime.js';
import { randomBytes } from 'node:crypto';
import { loadMigrations } from '../src/store/migrate.js';
import { adminQuery, createTestDb, onPostgres, postgresUrl, type TestDb } from './helpers/db.js';
import { SOURCE, workerTestConfig } from './helpers/inbox.js';
import { outboxHarness } from './helpers/outbox.js';
import { waitUntil } from './helpers/wait.js';

const run = promisify(execFile);
const TOKEN = 'cli-progress-token';

/** A stream that records what was written, a terminal or not as told. */
function fakeStream(isTTY: boolean): ProgressStream & { text: string } {
  return {
    isTTY,
    columns: 60,
    text: '',
    write(s: string) {
      this.text += s;
      return true;
    },
  };
}

describe('the progress line', () => {
  it('shows done/total, percent, rate, ETA and position; without a total, only what is known', () => {
    expect(formatProgress('replay-bulk', { done: 250, total: 1000, at: 'job_1' }, 5000)).toBe('replay-bulk 250/1000 25% 50/s ETA 15s at job_1');
    expect(formatProgress('reconcile', { done: 3, at: 'cur_9' }, 2000, ' items')).toBe('reconcile 3 items 1.5/s at cur_9');
  });

  it('on a terminal redraws one line in place, at most ten times a second, and clears it', () => {
    let now = 0;
    const stream = fakeStream(true);
    const p = new Progress('job', { stream, now: () => now });
    for (let i = 1; i <= 10; i++) {
      now += 50;
      p.update({ done: i, total: 10 });
    }
    const draws = stream.text.split('\r\x1b[2K').filter(Boolean);
    expect(draws).toHaveLength(5);
    expect(stream.text).not.toContain('\n');
    p.update({ done: 10, total: 10, at: 'x'.repeat(200) });
    now += 200;
    p.update({ done: 10, total: 10, at: 'x'.repeat(200) });
    expect(stream.text.split('\r\x1b[2K').at(-1)!.length).toBeLessThanOrEqual(59); // never wraps
    p.clear();
    expect(stream.text.endsWith('\r\x1b[2K')).toBe(true);
  });

  it('elsewhere writes a plain line every few seconds, the first after one interval; quiet (--json) writes nothing', () => {
    let now = 0;
    const plain = fakeStream(false);
    const quiet = fakeStream(true);
    const p = new Progress('job', { stream: plain, now: () => now, plainEveryMs: 5000 });
    const q = new Progress('job', { stream: quiet, now: () => now, quiet: true });
    for (let i = 1; i <= 120; i++) {
      now += 100;
      p.update({ done: i, total: 120 });
      q.update({ done: i, total: 120 });
    }
    p.clear();
    expect(plain.text.split('\n').filter(Boolean)).toEqual(['job 50/120 41% 10/s ETA 7s', 'job 100/120 83% 10/s ETA 2s']);
    expect(quiet.text).toBe('');
  });
});

/** `tekil inbox replay-bulk` against a running tekil with thousands of dead deliveries. */
describe('CLI: replay-bulk shows its progress and stops cleanly on Ctrl-C', () => {
  let t: TestDb;
  let tekil: RunningTekil;
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  const CLI = ['--import', 'tsx', 'src/cli/main.ts'];

  const seedDead = async (prefix: string, n: number) => {
    await t.db.query(
      `INSERT INTO inbox_deliveries (source, event_id, resource_id, event_type, body)
       SELECT $1, $2 || lpad(i::text, 6, '0'), $2 || i, 'invoice.paid', '\\x7b7d' FROM generate_series(1, $3::int) AS i`,
      [SOURCE, prefix, n],
    );
    await t.db.query(`UPDATE inbox_deliveries SET status = 'dead', attempts = 3 WHERE event_id LIKE $1 || '%'`, [prefix]);
    await t.db.query(`UPDATE inbox_queue SET dead = true WHERE event_id LIKE $1 || '%'`, [prefix]);
  };

  beforeAll(async () => {
    t = await createTestDb();
    dataDir = mkdtempSync(join(tmpdir(), 'tekil-progress-cli-'));
    env = { ...process.env, TEKIL_ADMIN_TOKEN: TOKEN, TEKIL_DATA_DIR: dataDir };
    tekil = await startTekil({
      config: workerTestConfig(),
      roles: new Set(['api'] as const),
      env,
      db: t.db,
      port: 0,
      host: '127.0.0.1',
      logger: pino({ level: 'silent' }),
    });
    env.TEKIL_URL = tekil.url;
  });
  afterAll(async () => {
    await tekil?.close();
    await t?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('under a terminal the line updates in place on stderr; with --json nothing but the JSON', async () => {
    expect(existsSync('/usr/bin/script')).toBe(true); // util-linux: runs the CLI under a pseudo-terminal
    await seedDead('evt_tty', 1500);
    const tty = await run('script', ['-qec', `${process.execPath} ${CLI.join(' ')} inbox replay-bulk --source ${SOURCE}`, '/dev/null'], {
      env,
      timeout: 90_000,
    });
    const draws = tty.stdout.split('\r\x1b[2K').filter((s) => s.startsWith('replay-bulk '));
    expect(draws.length).toBeGreaterThanOrEqual(2);
    expect(draws.at(-1)).toMatch(/^replay-bulk \d+\/1500 \d+% [\d.]+\/s .*at job_[0-9a-f]+/);
    expect(tty.stdout).toMatch(/queued 1500 deliveries/);

    await seedDead('evt_json', 500);
    const json = await run('script', ['-qec', `${process.execPath} ${CLI.join(' ')} inbox replay-bulk --source ${SOURCE} --json`, '/dev/null'], {
      env,
      timeout: 90_000,
    });
    expect(json.stdout).not.toContain('replay-bulk');
    expect(json.stdout).not.toContain('\x1b[');
    expect(JSON.parse(json.stdout)).toMatchObject({ status: 'done', total: 500, changed: 500 });
  }, 180_000);

  it('not on a terminal writes plain lines; Ctrl-C cancels the job and says how to resume', async () => {
    await seedDead('evt_int', 30_000);
    const child = spawn(process.execPath, [...CLI, 'inbox', 'replay-bulk', '--source', SOURCE], { env: { ...env, TEKIL_PROGRESS_INTERVAL: '100' } });
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    await waitUntil(() => /replay-bulk [1-9]\d*\/30000/.test(stderr), 60_000, 'a progress line with work done');
    expect(stderr).not.toContain('\x1b[');
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    const jobId = /interrupted: job (job_[0-9a-f]+) cancelled after (\d+) of 30000/.exec(stderr);
    expect(jobId, stderr).not.toBeNull();
    expect(stderr).toMatch(/to resume, run the same command again/);
    const { rows } = await t.db.query<{ status: string; processed: number }>('SELECT status, processed FROM dashboard_jobs WHERE id = $1', [jobId![1]]);
    expect(rows[0]).toEqual({ status: 'cancelled', processed: Number(jobId![2]) });
    const dead = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM inbox_queue WHERE dead AND event_id LIKE 'evt_int%'`);
    expect(dead.rows[0]!.n).toBe(30_000 - Number(jobId![2]));
  }, 120_000);

  it('an export to a file streams into it with a progress line on stderr; to stdout, the same bytes and no line', async () => {
    const h = outboxHarness(t.db);
    await h.endpoints.create(t.db, { url: 'http://127.0.0.1:9/export-hook', event_types: ['export.event'] });
    await t.db.transaction(async (tx) => {
      for (let i = 0; i < 300; i++) await publish(tx, { type: 'export.event', data: { i } });
    });
    const file = join(dataDir, 'deliveries.csv');
    const withFile = await run(process.execPath, [...CLI, 'messages', 'export', '-o', file], {
      env: { ...env, TEKIL_PROGRESS_INTERVAL: '1' },
      timeout: 60_000,
    });
    expect(withFile.stdout).toBe('');
    expect(withFile.stderr).toMatch(new RegExp(`^export [1-9]\\d* lines [\\d.]+/s at ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'));
    const written = readFileSync(file, 'utf8');
    expect(written.trimEnd().split('\n')).toHaveLength(301); // the header and the 300 deliveries
    const toStdout = await run(process.execPath, [...CLI, 'messages', 'export'], { env, timeout: 60_000 });
    expect(toStdout.stdout).toBe(written);
    expect(toStdout.stderr).toBe('');
  }, 120_000);
});

/** `tekil migrate` on a store with no migration yet: which one it is applying, on stderr. */
describe('CLI: tekil migrate progress', () => {
  it('names each migration as it goes, off a terminal as plain lines; stdout stays the list applied', { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tekil-migrate-progress-'));
    const env: NodeJS.ProcessEnv = { ...process.env, TEKIL_DATA_DIR: join(dir, 'data'), TEKIL_PROGRESS_INTERVAL: '1', TEKIL_LOG_LEVEL: 'silent' };
    delete env.DATABASE_URL;
    const name = `tekil_migp_${randomBytes(6).toString('hex')}`;
    if (onPostgres) {
      await adminQuery(`CREATE DATABASE ${name}`);
      const url = new URL(postgresUrl!);
      url.pathname = `/${name}`;
      env.DATABASE_URL = url.toString();
    }
    try {
      const total = (await loadMigrations()).length;
      const migrated = await run(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'migrate'], { env, timeout: 110_000 });
      expect(migrated.stdout).toMatch(/^applied: 001_/);
      expect(migrated.stderr).toMatch(new RegExp(`^migrate \\d+/${total} migrations \\d+% [\\d.]+/s (ETA \\S+ )?at (\\d{3}_[\\w-]+|done)$`, 'm'));
      expect(migrated.stderr).not.toContain('\x1b[');
    } finally {
      if (onPostgres) await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

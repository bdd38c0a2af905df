import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminQuery, onPostgres, postgresUrl } from './helpers/db.js';
import { freePort } from './helpers/free-port.js';
import { runListingModules } from './helpers/loaded-modules.js';
import { repoRoot } from './helpers/tekil-process.js';

/**
 * A newcomer's first start, as a process in a directory of its own (its own `.env`, no tekil.yaml):
 * a taken port said plainly before anything is migrated, PORT and `.env`, the admin token shown once
 * and pointed to afterwards (even when the start failed), `tekil admin-token`, JSON logs on a pipe.
 */

const tsx = pathToFileURL(join(repoRoot, 'node_modules/tsx/dist/loader.mjs')).href;
const main = join(repoRoot, 'src/cli/main.ts');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The CLI as a process in `cwd`; resolves with its exit code instead of throwing on a non-zero one. */
function cli(cwd: string, env: NodeJS.ProcessEnv, ...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', tsx, main, ...args], { cwd, env: { ...cleanEnv(), ...env }, timeout: 120_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** The test process's environment without what a tekil setting would be read from. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of ['PORT', 'DATABASE_URL', 'TEKIL_ADMIN_TOKEN', 'TEKIL_DATA_DIR', 'TEKIL_LOG_LEVEL', 'TEKIL_METRICS_TOKEN', 'TEKIL_URL']) delete env[name];
  return env;
}

/** `tekil start` in `cwd` until its banner (on stderr) names its URL; then SIGTERM and its whole output. */
async function startAndStop(cwd: string, env: NodeJS.ProcessEnv, ...args: string[]): Promise<{ url: string; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', tsx, main, 'start', '--role', 'api', ...args], {
    cwd,
    env: { ...cleanEnv(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      const m = /tekil listening on (http:\/\/[\d.:]+)/.exec(stderr);
      if (m) resolve(m[1]!);
    });
    void exited.then((code) => reject(new Error(`tekil start exited (${code}) before listening:\n${stdout}\n${stderr}`)));
  });
  child.kill('SIGTERM');
  await exited;
  return { url, stdout, stderr };
}

describe('tekil start: the first start, and what it says when it cannot', () => {
  let databaseUrl: string | undefined;
  let database: string | undefined;
  let occupied: Server;
  let takenPort: number;

  beforeAll(async () => {
    if (onPostgres) {
      database = `tekil_cli_start_${process.pid}`;
      await adminQuery(`DROP DATABASE IF EXISTS ${database}`);
      await adminQuery(`CREATE DATABASE ${database}`);
      const u = new URL(postgresUrl!);
      u.pathname = `/${database}`;
      databaseUrl = u.toString();
    }
    occupied = createServer();
    await new Promise<void>((resolve) => occupied.listen(0, '0.0.0.0', resolve));
    takenPort = (occupied.address() as { port: number }).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => occupied?.close(resolve));
    if (database) await adminQuery(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  });

  /** The store's tables, to show a refused start migrated nothing (PGlite: its data dir stays empty). */
  async function tablesIn(dataDir: string): Promise<string[]> {
    if (!databaseUrl) return readdirSync(dataDir);
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'");
      return rows.map((r) => r.table_name);
    } finally {
      await client.end();
    }
  }

  it('a taken port is refused before the store is opened: which port, where it came from, what to change', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tekil-cli-start-'));
    const dataDir = join(dir, 'data');
    mkdirSync(dataDir);
    const run = await cli(dir, { PORT: String(takenPort), TEKIL_DATA_DIR: dataDir, DATABASE_URL: databaseUrl ?? '' }, 'start');
    expect(run.code).toBe(1);
    const last = run.stderr.trimEnd().split('\n').at(-1)!;
    expect(last).toBe(
      `tekil: PORT_UNAVAILABLE: port ${takenPort} on 0.0.0.0 (from PORT) is already in use by another process ` +
        '(hint: stop what listens there, or choose another port: --port N, PORT=N (environment or .env), or server.port in tekil.yaml)',
    );
    expect(run.stderr).not.toMatch(/EADDRINUSE|\bat \S+ \(/);
    // Nothing was migrated, and no admin token was made for a start that never began.
    expect(await tablesIn(dataDir)).toEqual([]);
    // --port names itself.
    const flagged = await cli(dir, { TEKIL_DATA_DIR: dataDir, DATABASE_URL: databaseUrl ?? '' }, 'start', '--port', String(takenPort));
    expect(flagged.stderr).toContain(`port ${takenPort} on 0.0.0.0 (from --port) is already in use`);
  }, 180_000);

  // Neither this nor the next depends on the store under test: run once.
  it.skipIf(onPostgres)(
    'a start that fails after making the admin token shows it, and `tekil admin-token` prints it again',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'tekil-cli-start-'));
      const dataDir = join(dir, 'data');
      // A store that refuses connections: the start fails after the token was made and saved.
      const closed = await freePort();
      const run = await cli(dir, { TEKIL_DATA_DIR: dataDir, DATABASE_URL: `postgres://postgres@127.0.0.1:${closed}/tekil` }, 'start', '--port', '0');
      expect(run.code).toBe(1);
      const token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
      expect(run.stderr).toContain(
        `admin token (made by this start and saved to ${join(dataDir, 'admin-token')}; \`npx tekil admin-token\` prints it again): ${token}`,
      );
      const shown = await cli(dir, { TEKIL_DATA_DIR: dataDir }, 'admin-token');
      expect(shown).toMatchObject({ code: 0, stdout: `${token}\n` });
      expect(shown.stderr).toContain(`saved in ${join(dataDir, 'admin-token')}`);
    },
    180_000,
  );

  it.skipIf(onPostgres)(
    '`tekil admin-token`: the saved token, --path, TEKIL_ADMIN_TOKEN, and a plain refusal when there is none; .env is read',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'tekil-cli-start-'));
      const dataDir = join(dir, 'data');
      // The data dir comes from .env only: the command finds it there.
      writeFileSync(join(dir, '.env'), `TEKIL_DATA_DIR=${dataDir}\n`);
      const none = await cli(dir, {}, 'admin-token');
      expect(none.code).toBe(1);
      expect(none.stderr).toContain(`tekil: ADMIN_TOKEN_NOT_FOUND: no TEKIL_ADMIN_TOKEN is set and no token is saved in ${join(dataDir, 'admin-token')}`);
      mkdirSync(dataDir);
      writeFileSync(join(dataDir, 'admin-token'), 'tk_saved_token_of_the_first_start\n');
      expect(await cli(dir, {}, 'admin-token')).toMatchObject({ code: 0, stdout: 'tk_saved_token_of_the_first_start\n' });
      expect(await cli(dir, {}, 'admin-token', '--path')).toMatchObject({ code: 0, stdout: `${join(dataDir, 'admin-token')}\n` });
      const fromEnv = await cli(dir, { TEKIL_ADMIN_TOKEN: 'an-operator-chosen-token' }, 'admin-token');
      expect(fromEnv).toMatchObject({ code: 0, stdout: 'an-operator-chosen-token\n' });
      expect(fromEnv.stderr).toContain('from TEKIL_ADMIN_TOKEN');
    },
    120_000,
  );

  it('PORT and the data dir from .env (the environment wins over it); the banner on stderr, JSON logs on stdout; a later start points to the token', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tekil-cli-start-'));
    const dataDir = join(dir, 'data');
    const port = await freePort();
    // TEKIL_LOG_LEVEL in .env is not a level: were .env to win over the environment, start would refuse it.
    writeFileSync(join(dir, '.env'), `# a comment\nPORT=${port}\nTEKIL_DATA_DIR=${dataDir}\nTEKIL_LOG_LEVEL=not-a-level\n`);
    const env = { TEKIL_LOG_LEVEL: 'info', DATABASE_URL: databaseUrl ?? '' };
    const first = await startAndStop(dir, env);
    expect(first.url).toMatch(new RegExp(`:${port}$`));
    const token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
    expect(first.stderr).toContain(`admin token (shown once, saved to ${join(dataDir, 'admin-token')}): ${token}`);
    // stdout is a pipe here: every line is a JSON log line, and the banner is not among them.
    const lines = first.stdout.split('\n').filter((l) => l.trim() !== '');
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    expect(first.stdout).not.toContain('tekil listening');

    const later = await startAndStop(dir, env);
    expect(later.stderr).toContain(`admin token: saved in ${join(dataDir, 'admin-token')} (\`npx tekil admin-token\` prints it)`);
    expect(later.stderr).not.toContain(token);
  }, 300_000);
});

describe.skipIf(onPostgres)('tekil --help', () => {
  it('loads none of the server, store or export modules', async () => {
    const run = await runListingModules(['src/cli/main.ts', '--help'], cleanEnv());
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('admin-token');
    expect(run.urls.some((url) => url.endsWith('/src/cli/main.ts'))).toBe(true);
    for (const heavy of ['fastify', 'exceljs', 'pdfkit', '@electric-sql/pglite', 'pg', 'prom-client', 'pino-pretty']) {
      expect(run.loadedPackage(heavy), heavy).toBe(false);
    }
  }, 60_000);
});

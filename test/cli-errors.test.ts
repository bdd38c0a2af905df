import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/load.js';
import { createLogger } from '../src/logger.js';
import { startTekil, type RunningTekil } from '../src/runtime.js';
import { createTestDb, onPostgres, type TestDb } from './helpers/db.js';

const TOKEN = 'cli-errors-token';

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

describe('CLI: a refused call prints the code, the message and the hint, not a stack', () => {
  let t: TestDb | undefined;
  let tekil: RunningTekil;
  let env: NodeJS.ProcessEnv;

  /** Runs the CLI as a child process; resolves with its exit code instead of throwing on a non-zero one. */
  const cli = (...args: string[]) =>
    new Promise<CliRun>((resolve) => {
      execFile(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { env }, (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      });
    });

  beforeAll(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tekil-cli-errors-'));
    if (onPostgres) t = await createTestDb();
    env = { ...process.env, TEKIL_ADMIN_TOKEN: TOKEN, TEKIL_DATA_DIR: dataDir, TEKIL_SECRET_KEY: 'cli errors key', DATABASE_URL: t?.url ?? '' };
    // No sending.allow_networks: a loopback endpoint is refused by the destination guard.
    const config = parseConfig({});
    tekil = await startTekil({ config, roles: new Set(['api']), env, port: 0, host: '127.0.0.1', logger: createLogger({ level: 'silent' }) });
    env.TEKIL_URL = tekil.url;
  });
  afterAll(async () => {
    await tekil?.close();
    await t?.close();
  });

  it('FORBIDDEN_DESTINATION: one line with the code, the message and the allow_networks line to add', async () => {
    const run = await cli('endpoints', 'create', 'http://127.0.0.1:9/hooks');
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    const lines = run.stderr.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^tekil: FORBIDDEN_DESTINATION: destination 127\.0\.0\.1 resolves to 127\.0\.0\.1/);
    expect(lines[0]).toMatch(/ \(hint: to allow it, add to the configuration: sending: \{ allow_networks: \["127\.0\.0\.0\/8"\] \}\)$/);
    expect(lines).toHaveLength(1);
    expect(run.stderr).not.toMatch(/\bat \S+ \(/);
  }, 30_000);

  it('the hint names the narrowest network that allows the destination', async () => {
    const run = await cli('endpoints', 'create', 'http://10.1.2.3/hooks');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('(hint: to allow it, add to the configuration: sending: { allow_networks: ["10.1.2.3/32"] })');
  }, 30_000);

  it('--verbose keeps the stack for whoever wants it', async () => {
    const run = await cli('--verbose', 'endpoints', 'create', 'http://127.0.0.1:9/hooks');
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^tekil: FORBIDDEN_DESTINATION: /);
    expect(run.stderr).toMatch(/\n\s+at /);
  }, 30_000);

  it('a server that cannot be reached: a coded line, no stack', async () => {
    const run = await cli('endpoints', 'list', '--url', 'http://127.0.0.1:9');
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^tekil: SERVER_UNREACHABLE: cannot reach tekil at http:\/\/127\.0\.0\.1:9/);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  }, 30_000);

  it("a server's code other than FORBIDDEN_DESTINATION is kept too (NOT_FOUND)", async () => {
    const run = await cli('endpoints', 'show', 'ep_missing');
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^tekil: NOT_FOUND: /);
    expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
  }, 30_000);
});

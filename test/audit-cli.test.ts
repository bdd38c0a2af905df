import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/load.js';
import { createLogger } from '../src/logger.js';
import { startTekil, type RunningTekil } from '../src/runtime.js';
import { createTestDb, type TestDb } from './helpers/db.js';

const run = promisify(execFile);
const ADMIN = 'audit-cli-admin-token';

describe('CLI: tekil audit against a running tekil', () => {
  let t: TestDb | undefined;
  let tekil: RunningTekil;
  let env: NodeJS.ProcessEnv;

  const cli = async (...args: string[]) => run(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { env });

  beforeAll(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tekil-audit-cli-'));
    t = await createTestDb();
    env = { ...process.env, TEKIL_ADMIN_TOKEN: ADMIN, TEKIL_DATA_DIR: dataDir };
    tekil = await startTekil({
      config: parseConfig({}),
      roles: new Set(['api']),
      env,
      db: t.db,
      port: 0,
      host: '127.0.0.1',
      logger: createLogger({ level: 'silent' }),
    });
    env.TEKIL_URL = tekil.url;
  });
  afterAll(async () => {
    await tekil?.close();
    await t?.close();
  });

  it('shows the operator changes made through the CLI, filtered, as a table and as JSON', async () => {
    const made = await cli('operators', 'create', 'selin', '--role', 'operator');
    const token = (JSON.parse(made.stdout) as { token: string }).token;
    await cli('operators', 'revoke', 'selin');

    const table = await cli('audit', '--actor', 'admin');
    const lines = table.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^at\s+actor\s+role\s+address\s+method\s+route\s+status\s+error_code/);
    expect(lines[1]).toContain('/api/v1/operators/:id/revoke');
    expect(lines[2]).toMatch(/POST\s+\/api\/v1\/operators\s+201/);

    const json = JSON.parse((await cli('audit', '--route', '/api/v1/operators', '--outcome', 'ok', '--json')).stdout) as Array<{
      actor: string;
      status: number;
      target: { body: { name: string } };
    }>;
    expect(json).toEqual([
      expect.objectContaining({ actor: 'admin', status: 201, target: expect.objectContaining({ body: { name: 'selin', role: 'operator' } }) }),
    ]);
    expect(JSON.stringify(json)).not.toContain(token);

    const paged = JSON.parse((await cli('audit', '--limit', '1', '--all', '--json')).stdout) as unknown[];
    expect(paged).toHaveLength(2);
    // Five CLI runs, each compiling the CLI through tsx: about 12 s on a quiet machine, over 30 s on a loaded one.
  }, 120_000);
});

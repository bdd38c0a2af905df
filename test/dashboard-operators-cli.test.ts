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
const ADMIN = 'operators-cli-admin';

describe('CLI: tekil operators create | list | revoke against a running tekil', () => {
  let t: TestDb | undefined;
  let tekil: RunningTekil;
  let env: NodeJS.ProcessEnv;

  const cli = async (extra: NodeJS.ProcessEnv, ...args: string[]) =>
    run(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { env: { ...env, ...extra } });
  /** A refused command: its exit and its one-line error. */
  const refused = async (extra: NodeJS.ProcessEnv, ...args: string[]): Promise<string> => {
    const err = (await cli(extra, ...args).then(
      () => undefined,
      (e: unknown) => e,
    )) as { code?: number; stderr?: string } | undefined;
    expect(err?.code).toBe(1);
    return err?.stderr ?? '';
  };

  beforeAll(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tekil-operators-cli-'));
    // A migrated test store handed in: a fresh PGlite would spend seconds initialising and migrating.
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

  it('makes a viewer whose token can list but not replay, then revokes it', async () => {
    const made = await cli({}, 'operators', 'create', 'ayse', '--role', 'viewer');
    const { token, id } = JSON.parse(made.stdout) as { token: string; id: string };
    expect(token).toMatch(/^tko_/);
    expect(made.stderr).toMatch(/shown only now/);

    // Each CLI run starts a process (seconds on a busy machine): two at once, the rest checked in the store.
    const [list, refusal] = await Promise.all([
      cli({}, 'operators', 'list', '--json'),
      refused({ TEKIL_ADMIN_TOKEN: token }, 'inbox', 'replay-bulk', '--status', 'dead'),
    ]);
    expect(JSON.parse(list.stdout)).toEqual([expect.objectContaining({ name: 'ayse', role: 'viewer' })]);
    expect(refusal).toMatch(/^tekil: FORBIDDEN: the viewer role cannot do this/m);

    await cli({}, 'operators', 'revoke', 'ayse');
    const { rows } = await tekil.ctx.db.query<{ revoked: boolean }>('SELECT revoked_at IS NOT NULL AS revoked FROM operators WHERE id = $1', [id]);
    expect(rows[0]?.revoked).toBe(true);
  }, 90_000); // CLI processes, each compiling the CLI's sources through tsx
});

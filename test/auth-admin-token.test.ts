import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN_MIN_LENGTH } from '../src/auth/admin-token.js';
import { parseConfig } from '../src/config/load.js';
import { createLogger } from '../src/logger.js';
import { startTekil, type RunningTekil } from '../src/runtime.js';
import { createTestDb, type TestDb } from './helpers/db.js';

/** The admin token can do everything: one that is easy to guess stops tekil from starting. */
describe('the admin token has a minimum length', () => {
  let t: TestDb;
  let dataDir: string;
  let tekil: RunningTekil | undefined;

  const start = (env: Record<string, string>) =>
    startTekil({
      config: parseConfig({ store: { data_dir: dataDir } }),
      roles: ['api'],
      env: { ...env, TEKIL_DATA_DIR: dataDir, ...(t.url ? { DATABASE_URL: t.url } : {}) },
      db: t.db,
      port: 0,
      host: '127.0.0.1',
      logger: createLogger({ level: 'silent' }),
    });
  const status = async (token: string) =>
    await request(`${tekil!.url}/api/v1/operators`, { headers: { authorization: `Bearer ${token}` } }).then(async (res) => {
      await res.body.dump();
      return res.statusCode;
    });

  beforeEach(async () => {
    t = await createTestDb();
    dataDir = mkdtempSync(join(tmpdir(), 'tekil-admin-token-'));
  });
  afterEach(async () => {
    await tekil?.close();
    tekil = undefined;
    await t?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('refuses TEKIL_ADMIN_TOKEN=a, and one a character short, with CONFIG_INVALID', async () => {
    expect(ADMIN_TOKEN_MIN_LENGTH).toBe(16);
    await expect(start({ TEKIL_ADMIN_TOKEN: 'a' })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: expect.stringMatching(/TEKIL_ADMIN_TOKEN.*1 character long.*at least 16/),
    });
    await expect(start({ TEKIL_ADMIN_TOKEN: 'x'.repeat(15) })).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
  });

  it('accepts one of the minimum length', async () => {
    const token = 'y'.repeat(16);
    tekil = await start({ TEKIL_ADMIN_TOKEN: token });
    expect(await status(token)).toBe(200);
  });

  it('a generated token keeps working, across restarts; a short one written into its file is refused', async () => {
    tekil = await start({});
    const generated = tekil.adminToken!;
    expect(generated.generated).toBe(true);
    expect(generated.token.length).toBeGreaterThanOrEqual(16);
    expect(await status(generated.token)).toBe(200);
    await tekil.close();

    tekil = await start({});
    expect(tekil.adminToken).toMatchObject({ token: generated.token, generated: false });
    expect(await status(generated.token)).toBe(200);
    await tekil.close();
    tekil = undefined;

    const file = join(dataDir, 'admin-token');
    expect(readFileSync(file, 'utf8').trim()).toBe(generated.token);
    writeFileSync(file, 'short\n');
    await expect(start({})).rejects.toMatchObject({ code: 'CONFIG_INVALID', message: expect.stringContaining(file) });
  });
});

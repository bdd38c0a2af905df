import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/load.js';
import { createLogger } from '../src/logger.js';
import { createSecretBox } from '../src/outbox/secrets.js';
import { startTekil, type RunningTekil } from '../src/runtime.js';
import type { Role } from '../src/service.js';
import { createTestDb, type TestDb } from './helpers/db.js';

const SECRET_KEY = 'settings test key: passed in env, never in process.env';
const TOKEN = 'settings-test-token';

/**
 * The environment given to startTekil is read once into the context's settings; every part (the admin
 * API included, whatever roles run beside it) uses that key, and none falls back to process.env or
 * generates a key file of its own.
 */
describe.each<[string, Role[]]>([
  ['api alone', ['api']],
  ['api with the dispatcher', ['api', 'dispatcher']],
])('endpoint secrets are sealed with the TEKIL_SECRET_KEY given to startTekil (%s)', (_label, roles) => {
  let t: TestDb;
  let dataDir: string;
  let tekil: RunningTekil | undefined;

  beforeEach(async () => {
    t = await createTestDb();
    dataDir = mkdtempSync(join(tmpdir(), 'tekil-settings-'));
  });
  afterEach(async () => {
    await tekil?.close();
    await t?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('stores a secret that decrypts with that key, and writes no key file', async () => {
    // The data dir comes from the config here, so a stray fallback would write its key file into it.
    const config = parseConfig({ store: { data_dir: dataDir }, sending: { allow_networks: ['127.0.0.0/8'] } });
    const env = { TEKIL_SECRET_KEY: SECRET_KEY, TEKIL_ADMIN_TOKEN: TOKEN, ...(t.url ? { DATABASE_URL: t.url } : {}) };
    tekil = await startTekil({ config, roles, env, db: t.db, port: 0, host: '127.0.0.1', logger: createLogger({ level: 'silent' }) });

    const res = await request(`${tekil.url}/api/v1/endpoints`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: 'http://127.0.0.1:9/hook' }),
    });
    const created = (await res.body.json()) as { id: string; secret: string };
    expect(res.statusCode).toBe(201);

    const { rows } = await t.db.query<{ secret_enc: string }>('SELECT secret_enc FROM endpoint_secrets WHERE endpoint_id = $1', [created.id]);
    expect(rows).toHaveLength(1);
    expect(createSecretBox(SECRET_KEY).decrypt(rows[0]!.secret_enc)).toBe(created.secret);
    expect(existsSync(join(dataDir, 'secret-key'))).toBe(false);
  });
});

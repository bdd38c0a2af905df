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
const ADMIN = 'tenants-token-cli-admin';

describe('CLI: tekil tenants token create | list | revoke and tenants portal-link against a running tekil', () => {
  let t: TestDb | undefined;
  let tekil: RunningTekil;
  let env: NodeJS.ProcessEnv;

  const cli = async (...args: string[]) => run(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { env });
  const api = (token: string, path: string) => fetch(`${tekil.url}${path}`, { headers: { authorization: `Bearer ${token}` }, redirect: 'manual' });

  beforeAll(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tekil-tenants-token-cli-'));
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
    const made = await fetch(`${tekil.url}/api/v1/tenants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'm_cli', name: 'Cli Ltd' }),
    });
    expect(made.status).toBe(201);
  });
  afterAll(async () => {
    await tekil?.close();
    await t?.close();
  });

  it('makes a tenant token that sees its tenant only, lists it, revokes it; prints a portal link that works once', async () => {
    // Each CLI run starts a process (seconds on a busy machine): independent ones run two at once.
    const [made, link] = await Promise.all([
      cli('tenants', 'token', 'create', 'm_cli', '--role', 'viewer', '--name', 'backend'),
      cli('tenants', 'portal-link', 'm_cli', '--ttl', '5m', '--role', 'operator'),
    ]);
    const { token, id, tenant_id } = JSON.parse(made.stdout) as { token: string; id: string; tenant_id: string };
    expect(token).toMatch(/^tkt_/);
    expect(tenant_id).toBe('m_cli');
    expect(made.stderr).toMatch(/shown only now/);
    const url = link.stdout.trim();
    expect(url).toMatch(new RegExp(`^${tekil.url}/portal/link/[A-Za-z0-9_-]{43}$`));
    expect(link.stderr).toMatch(/Works once, until/);

    expect((await api(token, '/api/v1/endpoints')).status).toBe(200);
    expect((await api(token, '/api/v1/tenants')).status).toBe(404);
    const first = await fetch(url, { redirect: 'manual' });
    expect(first.status).toBe(303);
    expect(first.headers.get('set-cookie')).toMatch(/^tekil_portal=/);
    expect((await fetch(url, { redirect: 'manual' })).status).toBe(410);

    const listed = JSON.parse((await cli('tenants', 'token', 'list', 'm_cli', '--json')).stdout) as Array<{ id: string; name: string; role: string }>;
    expect(listed).toEqual([expect.objectContaining({ id, name: 'backend', role: 'viewer' })]);
    expect(JSON.stringify(listed)).not.toContain(token);

    const revoked = JSON.parse((await cli('tenants', 'token', 'revoke', 'm_cli', id)).stdout) as { revoked_at: string | null };
    expect(revoked.revoked_at).not.toBeNull();
    expect((await api(token, '/api/v1/endpoints')).status).toBe(401);
    const { rows } = await tekil.ctx.db.query<{ revoked: boolean }>('SELECT revoked_at IS NOT NULL AS revoked FROM tenant_tokens WHERE id = $1', [id]);
    expect(rows[0]?.revoked).toBe(true);

    // A refusal is the API's coded error, on one line.
    const refused = (await cli('tenants', 'token', 'create', 'm_nope', '--role', 'viewer').then(
      () => undefined,
      (e: unknown) => e,
    )) as { code?: number; stderr?: string } | undefined;
    expect(refused?.code).toBe(1);
    expect(refused?.stderr).toMatch(/^tekil: TENANT_NOT_FOUND: /m);
  }, 120_000); // CLI processes, each compiling the CLI's sources through tsx
});

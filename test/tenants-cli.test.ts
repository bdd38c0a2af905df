import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/load.js';
import { createLogger } from '../src/logger.js';
import { startTekil, type RunningTekil } from '../src/runtime.js';
import { createTestDb, onPostgres, type TestDb } from './helpers/db.js';
import { startSink, type Sink } from './helpers/sink.js';

const run = promisify(execFile);
const TOKEN = 'tenants-cli-test-token';

describe('CLI: tenants against a running tekil', () => {
  let t: TestDb | undefined;
  let tekil: RunningTekil;
  let sink: Sink;
  let env: NodeJS.ProcessEnv;

  const cli = async (...args: string[]) => (await run(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { env })).stdout;
  /** A refused command: its exit code is not 0 and stderr names the error code. */
  const refused = async (...args: string[]) => {
    try {
      await cli(...args);
    } catch (err) {
      return (err as { stderr: string }).stderr;
    }
    throw new Error(`expected tekil ${args.join(' ')} to fail`);
  };

  beforeAll(async () => {
    sink = await startSink();
    const dataDir = mkdtempSync(join(tmpdir(), 'tekil-tenants-cli-'));
    if (onPostgres) t = await createTestDb();
    env = { ...process.env, TEKIL_ADMIN_TOKEN: TOKEN, TEKIL_DATA_DIR: dataDir, TEKIL_SECRET_KEY: 'cli test key', DATABASE_URL: t?.url ?? '' };
    const config = parseConfig({
      sending: { allow_networks: ['127.0.0.0/8'], dispatcher: { poll_interval: '100ms' } },
      tenants: { allow_networks: ['127.0.0.0/8'] },
    });
    tekil = await startTekil({ config, roles: new Set(['api', 'dispatcher']), env, port: 0, host: '127.0.0.1', logger: createLogger({ level: 'silent' }) });
    env.TEKIL_URL = tekil.url;
  });
  afterAll(async () => {
    await tekil?.close();
    await sink?.close();
    await t?.close();
  });

  it('creates, lists, shows, updates a tenant, gives it an endpoint and a message, and deletes it only with --confirm', async () => {
    const created = JSON.parse(await cli('tenants', 'create', 'm_123', '--name', 'Kuru Kahve', '--metadata', '{"plan":"gold"}')) as {
      id: string;
      name: string;
    };
    expect(created).toMatchObject({ id: 'm_123', name: 'Kuru Kahve', metadata: { plan: 'gold' } });
    const listed = JSON.parse(await cli('tenants', 'list', '--json')) as Array<{ id: string }>;
    expect(listed.map((x) => x.id)).toEqual(['default', 'm_123']);
    expect(JSON.parse(await cli('tenants', 'update', 'm_123', '--disabled'))).toMatchObject({ disabled: true });
    expect(JSON.parse(await cli('tenants', 'update', 'm_123', '--enabled'))).toMatchObject({ disabled: false });
    expect(JSON.parse(await cli('tenants', 'show', 'm_123'))).toMatchObject({ id: 'm_123', disabled: false });

    // A tenant's own settings: defaults for its endpoints, and its weight.
    expect(JSON.parse(await cli('tenants', 'update', 'm_123', '--timeout', '3s', '--endpoint-max-in-flight', '4', '--weight', '2'))).toMatchObject({
      timeout_ms: 3000,
      endpoint_max_in_flight: 4,
      weight: 2,
    });
    const endpoint = JSON.parse(await cli('endpoints', 'create', sink.url, '--tenant', 'm_123')) as { id: string; tenant_id: string };
    expect(endpoint).toMatchObject({ tenant_id: 'm_123', timeout_ms: 3000, max_in_flight: 4, own_settings: [] });
    expect(JSON.parse(await cli('endpoints', 'update', endpoint.id, '--timeout', '5s'))).toMatchObject({ timeout_ms: 5000, own_settings: ['timeout'] });
    expect(JSON.parse(await cli('endpoints', 'update', endpoint.id, '--inherit', 'timeout'))).toMatchObject({ timeout_ms: 3000, own_settings: [] });
    expect((JSON.parse(await cli('endpoints', 'list', '--tenant', 'm_123', '--json')) as Array<{ id: string }>).map((e) => e.id)).toEqual([endpoint.id]);
    const published = JSON.parse(await cli('messages', 'publish', '--tenant', 'm_123', '--type', 'invoice.paid')) as { id: string };
    await sink.waitFor(1);
    expect(sink.requests[0]!.headers['webhook-id']).toBe(published.id);

    // Its quotas: shown, set (a provider's plan), removed again (the configured default applies).
    expect(JSON.parse(await cli('tenants', 'quotas', 'm_123'))).toMatchObject({ tenant_id: 'm_123', own: {}, held: { endpoints: 1 } });
    const raised = JSON.parse(await cli('tenants', 'quotas', 'm_123', '--endpoints', '200', '--streams', '3')) as { quotas: { endpoints: number } };
    expect(raised).toMatchObject({ quotas: { endpoints: 200, streams: 3 }, own: { endpoints: 200, streams: 3 } });
    expect(JSON.parse(await cli('tenants', 'quotas', 'm_123', '--streams', 'none'))).toMatchObject({ own: { endpoints: 200 } });
    expect(await refused('tenants', 'quotas', 'm_123', '--tokens', 'many')).toContain('VALIDATION_FAILED');

    expect(await refused('tenants', 'delete', 'm_123')).toContain('CONFIRMATION_REQUIRED');
    expect(JSON.parse(await cli('tenants', 'delete', 'm_123', '--confirm'))).toMatchObject({ id: 'm_123', deleted: true, endpoints: 1, messages: 1 });
    expect(await refused('tenants', 'show', 'm_123')).toContain('TENANT_NOT_FOUND');
  }, 360_000); // many CLI processes, each compiling the CLI's sources through tsx
});

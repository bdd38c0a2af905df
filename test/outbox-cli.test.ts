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
import { startSink, waitUntil, type Sink } from './helpers/sink.js';

const run = promisify(execFile);
const TOKEN = 'outbox-cli-test-token';

describe('CLI: endpoints and messages against a running tekil (api + dispatcher roles)', () => {
  let t: TestDb | undefined;
  let tekil: RunningTekil;
  let sink: Sink;
  let env: NodeJS.ProcessEnv;

  const cli = async (...args: string[]) => (await run(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { env })).stdout;

  beforeAll(async () => {
    sink = await startSink();
    const dataDir = mkdtempSync(join(tmpdir(), 'tekil-cli-'));
    if (onPostgres) t = await createTestDb();
    env = { ...process.env, TEKIL_ADMIN_TOKEN: TOKEN, TEKIL_DATA_DIR: dataDir, TEKIL_SECRET_KEY: 'cli test key', DATABASE_URL: t?.url ?? '' };
    const config = parseConfig({ sending: { allow_networks: ['127.0.0.0/8'], dispatcher: { poll_interval: '100ms' } } });
    tekil = await startTekil({ config, roles: new Set(['api', 'dispatcher']), env, port: 0, host: '127.0.0.1', logger: createLogger({ level: 'silent' }) });
    env.TEKIL_URL = tekil.url;
  });
  afterAll(async () => {
    await tekil?.close();
    await sink?.close();
    await t?.close();
  });

  it('creates an endpoint, publishes, and lists the delivery', async () => {
    const created = JSON.parse(await cli('endpoints', 'create', sink.url, '--event-types', 'invoice.*', '--ladder', '30s,2m', '--timeout', '5s')) as {
      id: string;
      secret: string;
      ladder: string[];
    };
    expect(created.secret).toMatch(/^whsec_/);
    expect(created.ladder).toEqual(['30s', '2m']);
    const published = JSON.parse(await cli('messages', 'publish', '--type', 'invoice.paid', '--resource-id', 'inv_7', '--data', '{"amount":"7.00"}')) as {
      id: string;
    };
    await sink.waitFor(1);
    expect(sink.requests[0]!.headers['webhook-id']).toBe(published.id);
    await waitUntil(async () => {
      const { rows } = await tekil.ctx.db.query<{ status: string }>('SELECT status FROM outbox_deliveries WHERE message_id = $1', [published.id]);
      return rows[0]?.status === 'succeeded';
    });
    const listed = JSON.parse(await cli('messages', 'list', '--endpoint', created.id, '--all', '--json')) as Array<{ message_id: string; status: string }>;
    expect(listed).toEqual([expect.objectContaining({ message_id: published.id, status: 'succeeded' })]);
  }, 60_000); // three CLI processes, each compiling the CLI's sources through tsx
});

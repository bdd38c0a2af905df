import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/load.js';
import { createLogger } from '../src/logger.js';
import { startTekil, type RunningTekil } from '../src/runtime.js';
import { createTestDb, onPostgres, type TestDb } from './helpers/db.js';

const run = promisify(execFile);
const TOKEN = 'event-types-cli-test-token';

describe('CLI: event-types against a running tekil', () => {
  let t: TestDb | undefined;
  let tekil: RunningTekil;
  let env: NodeJS.ProcessEnv;
  let dir: string;

  const cli = async (...args: string[]) => (await run(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { env })).stdout;
  const refused = async (...args: string[]) => {
    try {
      await cli(...args);
    } catch (err) {
      return (err as { stderr: string }).stderr;
    }
    throw new Error(`expected tekil ${args.join(' ')} to fail`);
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tekil-event-types-cli-'));
    if (onPostgres) t = await createTestDb();
    env = { ...process.env, TEKIL_ADMIN_TOKEN: TOKEN, TEKIL_DATA_DIR: dir, TEKIL_SECRET_KEY: 'cli test key', DATABASE_URL: t?.url ?? '' };
    tekil = await startTekil({ config: parseConfig({}), roles: new Set(['api']), env, port: 0, host: '127.0.0.1', logger: createLogger({ level: 'silent' }) });
    env.TEKIL_URL = tekil.url;
  });
  afterAll(async () => {
    await tekil?.close();
    await t?.close();
  });

  it('creates a type from a schema file, lists, shows and updates it, and prints the AsyncAPI document', async () => {
    const schemaFile = join(dir, 'invoice.paid.json');
    writeFileSync(schemaFile, JSON.stringify({ type: 'object', required: ['amount'], properties: { amount: { type: 'integer' } } }));
    const made = JSON.parse(
      await cli('event-types', 'create', 'invoice.paid', '--description', 'Paid in full', '--schema', schemaFile, '--example', '{"amount":100}'),
    ) as Record<string, unknown>;
    expect(made).toMatchObject({ name: 'invoice.paid', description: 'Paid in full', example: { amount: 100 }, version: 1, tenant_ids: null });

    const table = await cli('event-types', 'list');
    expect(table).toMatch(/^name\s+version\s+deprecated/);
    expect(table).toContain('invoice.paid');
    expect(JSON.parse(await cli('event-types', 'show', 'invoice.paid'))).toMatchObject({ schema: { required: ['amount'] } });

    const changed = JSON.parse(await cli('event-types', 'update', 'invoice.paid', '--deprecated', '--tenants', 'default', '--schema', '{"type":"object"}'));
    expect(changed).toMatchObject({ deprecated: true, tenant_ids: ['default'], version: 2 });
    expect(JSON.parse(await cli('event-types', 'update', 'invoice.paid', '--current', '--tenants', 'all'))).toMatchObject({
      deprecated: false,
      tenant_ids: null,
    });

    const doc = JSON.parse(await cli('event-types', 'asyncapi')) as { asyncapi: string; channels: Record<string, unknown> };
    expect(doc.asyncapi).toBe('3.0.0');
    expect(Object.keys(doc.channels)).toEqual(['invoice.paid']);

    expect(await refused('event-types', 'create', 'bad.type', '--schema', '{"type":"nope"}')).toContain('VALIDATION_FAILED');
    expect(await refused('event-types', 'create', 'bad.type', '--schema', join(dir, 'missing.json'))).toContain('cannot read');
  }, 180_000);
});

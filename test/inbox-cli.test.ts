import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTekil, type RunningTekil } from '../src/runtime.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { SOURCE, workerTestConfig } from './helpers/inbox.js';

const run = promisify(execFile);
const TOKEN = 'inbox-cli-test-token';

/** `tekil inbox list` filters by the same names as the API: --since, --until, --resource-id, --event-id, --min-attempts. */
describe('CLI: tekil inbox list filters', () => {
  let t: TestDb;
  let tekil: RunningTekil;
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  const cli = async (...args: string[]) => (await run(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { env })).stdout;

  beforeAll(async () => {
    t = await createTestDb();
    dataDir = mkdtempSync(join(tmpdir(), 'tekil-inbox-cli-'));
    env = { ...process.env, TEKIL_ADMIN_TOKEN: TOKEN, TEKIL_DATA_DIR: dataDir };
    tekil = await startTekil({
      config: workerTestConfig(),
      roles: new Set(['api'] as const),
      env,
      db: t.db,
      port: 0,
      host: '127.0.0.1',
      logger: pino({ level: 'silent' }),
    });
    env.TEKIL_URL = tekil.url;
    // Three deliveries received a day apart; two are about the same invoice.
    for (const [eventId, invoice, daysAgo] of [
      ['evt_old', 'inv_a', 3],
      ['evt_mid', 'inv_a', 2],
      ['evt_new', 'inv_b', 1],
    ] as const) {
      await t.db.query(
        `INSERT INTO inbox_deliveries (source, event_id, resource_id, event_type, body, received_at)
         VALUES ($1, $2, $3, 'invoice.paid', '\\x7b7d', now() - $4 * interval '1 day')`,
        [SOURCE, eventId, invoice, daysAgo],
      );
    }
  });
  afterAll(async () => {
    await tekil?.close();
    await t?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('--since, --until, --resource-id, --event-id and --min-attempts select what the API selects', async () => {
    const day = 86_400_000;
    const since = new Date(Date.now() - 2.5 * day).toISOString();
    const until = new Date(Date.now() - 0.5 * day).toISOString();
    const ids = (out: string) => (JSON.parse(out) as { items: Array<{ event_id: string }> }).items.map((i) => i.event_id);
    expect(ids(await cli('inbox', 'list', '--json', '--since', since, '--until', until))).toEqual(['evt_new', 'evt_mid']);
    expect(ids(await cli('inbox', 'list', '--json', '--resource-id', 'inv_a', '--since', since))).toEqual(['evt_mid']);
    await t.db.query("UPDATE inbox_queue SET attempts = 2 WHERE event_id = 'evt_old'");
    expect(ids(await cli('inbox', 'list', '--json', '--event-id', 'evt_old', '--min-attempts', '2'))).toEqual(['evt_old']);
    // Three CLI processes, each compiling the CLI's sources through tsx: seconds each on a busy machine.
  }, 60_000);
});

import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/index.js';
import { createTestDb, onPostgres, type TestDb } from './helpers/db.js';
import { countRows, receiverApp } from './helpers/receiver.js';

const run = promisify(execFile);
const MERCHANT_KEY = 'KEYdemo123';
const MERCHANT_SALT = 'SALTdemo456';
// Any text is an iyzico secret key; the simulator's outbox takes one shaped as a whsec_ secret.
const IYZICO_KEY = 'whsec_aXl6aWNvLXNpbXVsYXRvci1rZXktMDAx';

/** `tekil sign` and `tekil simulate --scheme paytr|iyzico` against the real receiver, on the store under test. */
describe('PayTR and iyzico: tekil sign and tekil simulate against the receiver', () => {
  let t: TestDb;
  let app: FastifyInstance;
  let url: string;
  let dir: string;
  const cli = (args: string[], env: NodeJS.ProcessEnv = {}) =>
    run(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { env: { ...process.env, ...env }, timeout: 120_000 });

  beforeAll(async () => {
    t = await createTestDb();
    dir = mkdtempSync(join(tmpdir(), 'tekil-providers-'));
    const sources = {
      paytr: { scheme: 'paytr' as const, paytr: { merchant_key: MERCHANT_KEY, merchant_salt: MERCHANT_SALT } },
      iyzico: { scheme: 'iyzico' as const, iyzico: { secret_key: IYZICO_KEY } },
    };
    writeFileSync(join(dir, 'tekil.yaml'), JSON.stringify({ sources }));
    ({ app } = await receiverApp(t.db, parseConfig({ sources })));
    url = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await app?.close();
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    await t.db.query('DELETE FROM inbox_deliveries');
  });

  const post = async (path: string, body: string | Buffer, headers: Record<string, string>) => {
    const res = await fetch(`${url}${path}`, { method: 'POST', body, headers });
    return { status: res.status, text: await res.text() };
  };

  it('tekil sign --scheme paytr writes the documented hash into the form; the receiver answers OK', async () => {
    const form = 'merchant_oid=SIP7001&status=success&total_amount=4990&payment_type=card&currency=TL&test_mode=1';
    writeFileSync(join(dir, 'paytr.form'), form);
    const { stdout } = await cli([
      'sign',
      '--scheme',
      'paytr',
      '--secret',
      MERCHANT_KEY,
      '--named-secret',
      `salt=${MERCHANT_SALT}`,
      '--body',
      join(dir, 'paytr.form'),
    ]);
    const hash = createHmac('sha256', MERCHANT_KEY).update(`SIP7001${MERCHANT_SALT}success4990`).digest('base64');
    expect(new URLSearchParams(stdout).get('hash')).toBe(hash);
    expect(stdout.startsWith(form)).toBe(true);
    const answer = await post('/in/paytr', stdout, { 'content-type': 'application/x-www-form-urlencoded' });
    expect(answer).toEqual({ status: 200, text: 'OK' });
    // --source reads the key and the salt from the paytr block.
    const bySource = await cli(['sign', '--config', join(dir, 'tekil.yaml'), '--source', 'paytr', '--body', join(dir, 'paytr.form')]);
    expect(bySource.stdout).toBe(stdout);
  }, 120_000);

  it('tekil sign --source iyzico prints the X-IYZ-SIGNATURE-V3 header the receiver verifies', async () => {
    const body = JSON.stringify({
      iyziEventTime: 1764844800000,
      iyziEventType: 'API_AUTH',
      iyziReferenceCode: 'r1',
      paymentId: '991',
      paymentConversationId: 'order-991',
      status: 'SUCCESS',
    });
    writeFileSync(join(dir, 'iyzico.json'), body);
    const { stdout } = await cli(['sign', '--config', join(dir, 'tekil.yaml'), '--source', 'iyzico', '--format', 'json', '--body', join(dir, 'iyzico.json')]);
    const headers = JSON.parse(stdout) as Record<string, string>;
    expect(headers['X-IYZ-SIGNATURE-V3']).toBe(createHmac('sha256', IYZICO_KEY).update(`${IYZICO_KEY}API_AUTH991order-991SUCCESS`).digest('hex'));
    const answer = await post('/in/iyzico', body, { 'content-type': 'application/json', ...headers });
    expect(answer).toEqual({ status: 200, text: '{"status":"accepted"}' });
  }, 120_000);

  it.each(['paytr', 'iyzico'] as const)(
    'tekil simulate --scheme %s: every delivery is answered 2xx, one row per notification',
    async (scheme) => {
      const dataDir = mkdtempSync(join(tmpdir(), `tekil-simulate-${scheme}-`));
      // The simulated provider keeps its outbox in a database of its own, apart from the receiver's.
      const providerDb = onPostgres ? await createTestDb() : undefined;
      try {
        const store = providerDb ? ['--database-url', providerDb.url!, '--data-dir', dataDir] : ['--data-dir', dataDir];
        const keys = scheme === 'paytr' ? ['--secret', MERCHANT_KEY, '--salt', MERCHANT_SALT] : ['--secret', IYZICO_KEY];
        const { stdout } = await cli([
          'simulate',
          '--target',
          `${url}/in/${scheme}`,
          '--scheme',
          scheme,
          ...keys,
          '--invoices',
          '12',
          '--faults',
          'duplicate=0.3',
          '--time-scale',
          '0.001',
          '--timeout',
          '5s',
          '--port',
          '0',
          '--seed',
          '5',
          '--json',
          ...store,
        ]);
        const summary = JSON.parse(stdout) as {
          eventsPublished: number;
          deliveries: Record<string, { deliveries: number }>;
          proxies: { target: { duplicated: number; answers: Record<string, number> } };
        };
        expect(summary.deliveries.succeeded!.deliveries).toBe(summary.eventsPublished);
        expect(Object.keys(summary.proxies.target.answers)).toEqual(['200']);
        const { rows } = await t.db.query<{ event_id: string; source: string }>('SELECT event_id, source FROM inbox_deliveries');
        expect(rows.every((r) => r.source === scheme)).toBe(true);
        // The receiver keeps one row per distinct notification, however many copies came.
        expect(new Set(rows.map((r) => r.event_id)).size).toBe(rows.length);
        expect(rows.length).toBeGreaterThan(0);
        expect(rows.length).toBeLessThanOrEqual(summary.eventsPublished);
        if (scheme === 'paytr') expect(rows.every((r) => /^[A-Za-z0-9]+:(success|failed)$/.test(r.event_id))).toBe(true);
        else expect(rows.every((r) => /^API_AUTH:[^:]+:(SUCCESS|FAILURE|INIT_THREEDS|CALLBACK_THREEDS)$/.test(r.event_id))).toBe(true);
        expect(await countRows(t.db)).toBe(rows.length);
      } finally {
        await providerDb?.close();
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
    180_000,
  );
});

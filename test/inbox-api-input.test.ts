import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, type TestDb } from './helpers/db.js';
import { insertInvoiceDelivery, SOURCE, workerTestConfig } from './helpers/inbox.js';
import { startTekil, type RunningTekil } from '../src/runtime.js';

const TOKEN = 'tk_inbox_input_token';
const cursorOf = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** Whatever an operator (or an attacker with the token) sends to the inbox routes: a coded 4xx, never a 500. */
describe('inbox admin API: bad input is a 400 with a code', () => {
  let t: TestDb;
  let running: RunningTekil;
  let dataDir: string;

  beforeAll(async () => {
    t = await createTestDb();
    dataDir = mkdtempSync(join(tmpdir(), 'tekil-inbox-input-'));
    running = await startTekil({
      config: workerTestConfig(),
      roles: new Set(['api'] as const),
      port: 0,
      host: '127.0.0.1',
      logger: pino({ level: 'silent' }),
      db: t.db,
      env: { TEKIL_ADMIN_TOKEN: TOKEN, TEKIL_DATA_DIR: dataDir },
    });
    for (let i = 0; i < 3; i++) await insertInvoiceDelivery(t.db, { eventId: `evt_in_${i}`, invoiceId: `inv_in_${i}`, orderId: 'o', status: 'paid' });
  });
  afterAll(async () => {
    await running?.close();
    await t?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const api = async (method: 'GET' | 'POST', path: string, body?: unknown) => {
    const res = await request(`${running.url}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.statusCode, json: (await res.body.json()) as Record<string, unknown> };
  };

  it('a real cursor pages through the list', async () => {
    const first = await api('GET', '/inbox?limit=2');
    expect(first.status).toBe(200);
    const next = await api('GET', `/inbox?limit=2&cursor=${String(first.json.next_cursor)}`);
    expect(next).toMatchObject({ status: 200, json: { next_cursor: null } });
    expect(next.json.items).toHaveLength(1);
  });

  const badCursors: Array<[string, string]> = [
    ['not base64 JSON', 'bm90IGpzb24'],
    ['the wrong shape', cursorOf({ a: 1 })],
    ['a time that is not a time', cursorOf(['yesterday', SOURCE, 'evt_in_1'])],
    ['a time out of range', cursorOf(['99999-12-31 00:00:00+00', SOURCE, 'evt_in_1'])],
    ['a month 13', cursorOf(['2026-13-01 00:00:00+00', SOURCE, 'evt_in_1'])],
    ['a NUL in the event id', cursorOf(['2026-01-01 00:00:00+00', SOURCE, 'evt\u0000'])],
    ['a lone surrogate in the source', cursorOf(['2026-01-01 00:00:00+00', 'x\ud800', 'evt'])],
    ['an empty cursor', ''],
  ];
  for (const [what, cursor] of badCursors) {
    it(`a cursor with ${what} → 400 VALIDATION_FAILED`, async () => {
      const res = await api('GET', `/inbox?cursor=${encodeURIComponent(cursor)}`);
      expect(res).toMatchObject({ status: 400, json: { error: 'VALIDATION_FAILED' } });
    });
  }

  it('odd filter values and path ids → 400 VALIDATION_FAILED, not a database error', async () => {
    const cases: Array<[string, string, unknown?]> = [
      ['GET', `/inbox?limit=0`],
      ['GET', `/inbox?limit=1e9`],
      ['GET', `/inbox?since=2026-02-30T00:00:00Z`],
      ['GET', `/inbox?resource_id=${'x'.repeat(5000)}`],
      ['POST', `/inbox/replay`, { resource_id: 'inv\u0000' }],
      ['POST', `/inbox/replay`, { source: 'shop\ud800' }],
      ['POST', `/inbox/replay`, { status: 'processing' }],
    ];
    for (const [method, path, body] of cases) {
      const res = await api(method as 'GET' | 'POST', path, body);
      expect({ path: path.slice(0, 60), body, status: res.status, error: res.json.error }).toEqual({
        path: path.slice(0, 60),
        body,
        status: 400,
        error: 'VALIDATION_FAILED',
      });
    }
    // Times at the edges: inside years 1…9999 (UTC) they are answered, outside they are refused.
    const timeCases: Array<[string, number]> = [
      ['0001-01-01T00:00:00Z', 200],
      ['1970-01-01T00:00:00.123456789Z', 200],
      ['9999-12-31T00:00:00Z', 200],
      ['0000-01-01T00:00:00Z', 400],
      ['9999-12-31T23:59:59-14:00', 400],
    ];
    for (const [time, status] of timeCases) {
      const res = await api('GET', `/inbox?since=${encodeURIComponent(time)}&until=${encodeURIComponent(time)}`);
      expect({ time, status: res.status }).toEqual({ time, status });
    }
    // A path id past the router's parameter limit is refused by the router itself (414), still a 4xx.
    const long = await api('GET', `/inbox/${SOURCE}/${'e'.repeat(5000)}`);
    expect(long.status).toBe(414);
  });
});

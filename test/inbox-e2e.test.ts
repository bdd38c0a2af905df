import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, type TestDb } from './helpers/db.js';
import { createOrder, deliveryRow, invoiceEvent, ledgerCount, SOURCE, startShopTekil, workerTestConfig } from './helpers/inbox.js';
import { waitUntil } from './helpers/wait.js';
import { orderHandlers } from '../examples/orders/handlers.js';
import type { RunningTekil } from '../src/runtime.js';
import { createScheme } from '../src/signing/index.js';

const TOKEN = 'tk_inbox_e2e_token';

/**
 * Through the real HTTP surface: POST /in/:source → worker → example shop, and the admin API.
 * (Bad signatures and timestamps never reach the inbox: test/receiver.test.ts and
 * test/signing-negative.test.ts cover them in depth; one check here ties them to "no effect".)
 */
describe('inbox end to end over HTTP', () => {
  let t: TestDb;
  let running: RunningTekil;
  let dataDir: string;
  let failWarehouse = false;
  const config = workerTestConfig();
  const secret = config.sources[SOURCE]!.secrets[0]!;
  const paymos = createScheme('paymos');

  beforeAll(async () => {
    t = await createTestDb();
    dataDir = mkdtempSync(join(tmpdir(), 'tekil-e2e-'));
    running = await startShopTekil({
      db: t.db,
      config,
      adminToken: TOKEN,
      dataDir,
      handlers: orderHandlers({
        source: SOURCE,
        afterPaid: async () => {
          if (failWarehouse) throw new Error('warehouse down');
        },
      }),
    });
  });
  afterAll(async () => {
    await running?.close();
    await t?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const send = (body: string, headers = paymos.sign({ body, secrets: [secret] })) =>
    request(`${running.url}/in/${SOURCE}`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
  const api = async (method: 'GET' | 'POST', path: string, body?: unknown, token = TOKEN) => {
    const res = await request(`${running.url}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.statusCode, json: (await res.body.json()) as Record<string, any> };
  };
  const waitForStatus = (eventId: string, status: string) =>
    waitUntil(async () => (await deliveryRow(t.db, eventId))?.status === status, 10_000, `${eventId} to become ${status}`);

  it('50 concurrent copies of a signed event → one delivery, one effect; a bad signature → nothing', async () => {
    const db = t.db;
    await createOrder(db, 'ord_h1');
    const { body } = invoiceEvent({ eventId: 'evt_h1', invoiceId: 'inv_h1', orderId: 'ord_h1', status: 'paid' });
    const headers = paymos.sign({ body, secrets: [secret] });
    const answers = await Promise.all(Array.from({ length: 50 }, () => send(body, headers).then((r) => r.body.json())));
    expect(answers.filter((a) => (a as { status: string }).status === 'accepted')).toHaveLength(1);
    await waitForStatus('evt_h1', 'done');
    expect(await ledgerCount(db, 'ord_h1')).toBe(1);

    await createOrder(db, 'ord_h2');
    const forged = invoiceEvent({ eventId: 'evt_h2', invoiceId: 'inv_h2', orderId: 'ord_h2', status: 'paid' }).body;
    const bad = await send(forged, paymos.sign({ body: forged, secrets: ['whsec_wrong'] }));
    expect(bad.statusCode).toBe(401);
    await bad.body.dump();
    const old = await send(forged, paymos.sign({ body: forged, secrets: [secret], timestamp: Math.floor(Date.now() / 1000) - 3600 }));
    expect(old.statusCode).toBe(401);
    await old.body.dump();
    // A 401 is answered before anything is stored: there is nothing to wait for.
    expect(await deliveryRow(db, 'evt_h2')).toBeUndefined();
    expect(await ledgerCount(db, 'ord_h2')).toBe(0);
  });

  it('admin API: review queue, show with attempts, replay after the fix, discard, token required', async () => {
    const db = t.db;
    failWarehouse = true;
    await createOrder(db, 'ord_h3');
    await createOrder(db, 'ord_h4');
    for (const [eventId, orderId] of [
      ['evt_h3', 'ord_h3'],
      ['evt_h4', 'ord_h4'],
    ] as const) {
      const res = await send(invoiceEvent({ eventId, invoiceId: `inv_${orderId}`, orderId, status: 'paid' }).body);
      await res.body.dump();
    }
    await waitForStatus('evt_h3', 'dead');
    await waitForStatus('evt_h4', 'dead');

    expect((await api('GET', '/inbox?status=dead', undefined, 'wrong')).status).toBe(401);
    const queue = await api('GET', `/inbox?status=dead&source=${SOURCE}&limit=1`);
    expect(queue.status).toBe(200);
    expect(queue.json.items).toHaveLength(1);
    expect(queue.json.items[0]).toMatchObject({ status: 'dead', attempts: 3 });
    const page2 = await api('GET', `/inbox?status=dead&source=${SOURCE}&limit=1&cursor=${queue.json.next_cursor}`);
    expect(page2.json.items).toHaveLength(1);
    expect(page2.json.next_cursor).toBeNull();
    expect(new Set([queue.json.items[0].event_id, page2.json.items[0].event_id])).toEqual(new Set(['evt_h3', 'evt_h4']));
    expect((await api('GET', '/inbox?status=nope')).status).toBe(400);

    const shown = await api('GET', `/inbox/${SOURCE}/evt_h3`);
    expect(shown.json).toMatchObject({ status: 'dead', body_encoding: 'utf8', resource_id: 'inv_ord_h3' });
    expect(JSON.parse(shown.json.body).event_id).toBe('evt_h3');
    expect(shown.json.attempt_history.map((a: { outcome: string }) => a.outcome)).toEqual(['retry', 'retry', 'dead']);
    expect(shown.json.attempt_history[0].error).toBe('Error: warehouse down');
    expect((await api('GET', `/inbox/${SOURCE}/evt_nope`)).status).toBe(404);

    expect((await api('POST', `/inbox/${SOURCE}/evt_h4/discard`)).status).toBe(200);
    failWarehouse = false;
    const replayed = await api('POST', `/inbox/${SOURCE}/evt_h3/replay`);
    expect(replayed.json).toMatchObject({ status: 'pending', attempts: 0 });
    await waitForStatus('evt_h3', 'done');
    expect(await ledgerCount(db, 'ord_h3')).toBe(1);
    expect((await deliveryRow(db, 'evt_h4'))?.status).toBe('discarded');
    expect(await ledgerCount(db, 'ord_h4')).toBe(0);

    // A done delivery: replay needs force, and even then the effect is not doubled.
    expect((await api('POST', `/inbox/${SOURCE}/evt_h3/replay`)).status).toBe(409);
    // The replay's answer is committed (pending): waiting for done waits for the new attempt.
    expect((await api('POST', `/inbox/${SOURCE}/evt_h3/replay`, { force: true })).status).toBe(200);
    await waitForStatus('evt_h3', 'done');
    expect(await ledgerCount(db, 'ord_h3')).toBe(1);

    // Bulk replay by filter brings the discarded one back.
    const bulk = await api('POST', '/inbox/replay', { status: 'discarded', source: SOURCE });
    expect(bulk.json).toEqual({ replayed: 1 });
    await waitForStatus('evt_h4', 'done');
    expect(await ledgerCount(db, 'ord_h4')).toBe(1);
  });
});

import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createTestDb, type TestDb } from './helpers/db.js';
import { countRows, paymosBody, receiverApp, receiverConfig, signPaymos } from './helpers/receiver.js';
import { rawRequest } from './helpers/raw-http.js';
import { waitUntil } from './helpers/wait.js';

/**
 * Bodies are read before their signature can be checked, so anyone who can open connections could
 * make a process hold `max_connections` x `body_limit` bytes. `receiver.in_flight_max_bytes` bounds
 * the body bytes held per process: past it a webhook is answered 503 OVERLOADED with Retry-After
 * (its body read and dropped, not kept), and the bytes are given back as requests are answered.
 */
describe('webhook body bytes in flight', () => {
  let t: TestDb;
  let app: FastifyInstance;
  let url: string;
  const bodyLimit = 64 * 1024;
  beforeAll(async () => {
    t = await createTestDb();
    // The minimum body rate is checked once a minute here: the held uploads below must stay held.
    const receiver = { in_flight_max_bytes: 4 * bodyLimit, body_rate_window: '1m' };
    ({ app } = await receiverApp(t.db, receiverConfig({ server: { body_limit: bodyLimit }, receiver })));
    url = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await app?.close();
    await t?.close();
  });

  /**
   * An unsigned upload from `from` that declares a full-size body, sends all of it but its last byte
   * and holds its connection. Bytes are charged as they arrive, and one address holds at most a
   * quarter of the bound (here one body): four addresses fill it.
   */
  async function heldUpload(from: string): Promise<net.Socket> {
    const socket = net.connect({ port: Number(new URL(url).port), host: '127.0.0.1', localAddress: from });
    socket.on('error', () => {});
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    socket.write(`POST /in/shop HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${bodyLimit}\r\n\r\n`);
    socket.write(Buffer.alloc(bodyLimit - 1, 'x'));
    return socket;
  }

  const signed = (id: string) => {
    const body = paymosBody(id);
    return { body, headers: Object.entries(signPaymos(body)) as Array<[string, string]> };
  };

  it('past the bound a webhook gets 503 OVERLOADED with Retry-After; once the held bodies are gone it is accepted', async () => {
    const held = await Promise.all([heldUpload('127.0.0.2'), heldUpload('127.0.0.3'), heldUpload('127.0.0.4'), heldUpload('127.0.0.5')]);
    try {
      // The four uploads hold the whole bound once the server has read their bodies; until then an
      // unsigned probe is let in (and refused 401), after it the probe does not fit.
      const probe = { path: '/in/shop', headers: [['Content-Type', 'application/json']] as Array<[string, string]>, body: '{"event_id":"evt_probe"}' };
      await waitUntil(async () => (await rawRequest(url, probe)).status === 503, 5_000, 'the bound is taken');
      const refused = await rawRequest(url, { path: '/in/shop', ...signed('evt_in_flight') });
      expect(refused.status).toBe(503);
      expect(refused.headers).toMatch(/\r\nretry-after: 5\r\n/i);
      expect(JSON.parse(refused.body)).toMatchObject({ error: 'OVERLOADED' });
      expect(JSON.parse(refused.body).message).toContain('receiver.in_flight_max_bytes');
      const held = (await app.inject({ method: 'GET', url: '/metrics' })).body;
      expect(held).toContain(`tekil_inbox_body_bytes_in_flight ${4 * (bodyLimit - 1)}`);
    } finally {
      for (const socket of held) socket.destroy();
    }
    // Their connections gone, the bytes are given back.
    await waitUntil(async () => (await rawRequest(url, { path: '/in/shop', ...signed('evt_in_flight') })).status === 200, 5_000, 'the bound given back');
    expect(await countRows(t.db, "event_id = 'evt_in_flight'")).toBe(1);
    const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(/tekil_inbox_deliveries_total\{source="shop",outcome="rejected",reason="OVERLOADED"\} [1-9]/);
    expect(metrics).toContain('tekil_inbox_body_bytes_in_flight 0');
  });

  it('gives the bytes back after every answer: many more bodies than the bound, one after another, are all accepted', async () => {
    // 24 full-size bodies, six times the bound, in series: none may be refused.
    for (let i = 0; i < 24; i++) {
      const body = paymosBody(`evt_series_${i}`, { pad: 'x'.repeat(bodyLimit - 400) });
      const res = await rawRequest(url, { path: '/in/shop', headers: Object.entries(signPaymos(body)) as Array<[string, string]>, body });
      expect(res.status, res.body).toBe(200);
    }
  });
});

import net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createTestDb, type TestDb } from './helpers/db.js';
import { paymosBody, receiverApp, receiverConfig, signPaymos } from './helpers/receiver.js';
import { rawRequest } from './helpers/raw-http.js';
import { waitUntil } from './helpers/wait.js';
import type { ConfigInput } from '../src/config/index.js';

/**
 * The body budget (`receiver.in_flight_max_bytes`) is shared by every client, so it must not be
 * taken by what a client only says it will send. Scaled down from the attack it answers: 70
 * connections declared `Content-Length: 1048576`, sent `{` and nothing more, and held the whole
 * 64 MiB (reserved from the declaration) until `request_timeout`; every other client's webhook got
 * 503 meanwhile. Bytes are charged as they arrive, one address holds at most its share, and a body
 * that stops arriving is cut.
 */
describe('the body budget is shared fairly', () => {
  let t: TestDb;
  let app: FastifyInstance | undefined;
  let url: string;
  const sockets: net.Socket[] = [];
  const bodyLimit = 64 * 1024;
  beforeAll(async () => {
    t = await createTestDb();
  });
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.destroy();
    await app?.close();
    app = undefined;
  });
  afterAll(async () => {
    await t?.close();
  });

  async function start(receiver: ConfigInput['receiver'], server: ConfigInput['server'] = {}): Promise<void> {
    ({ app } = await receiverApp(t.db, receiverConfig({ server: { body_limit: bodyLimit, ...server }, receiver })));
    url = await app.listen({ host: '127.0.0.1', port: 0 });
  }

  /**
   * A connection from `from` that declares a full-size body, waits until the server has read its
   * headers (it answers `100 Continue`), sends `first` and holds. Resolves `closed` with the answer.
   */
  async function upload(from: string, first: string | Buffer): Promise<{ socket: net.Socket; closed: Promise<string> }> {
    const socket = net.connect({ port: Number(new URL(url).port), host: '127.0.0.1', localAddress: from });
    sockets.push(socket);
    socket.on('error', () => {});
    let answer = '';
    const closed = new Promise<string>((resolve) => socket.once('close', () => resolve(answer)));
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    const continued = new Promise<void>((resolve) => socket.once('data', () => resolve()));
    socket.write(`POST /in/shop HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${bodyLimit}\r\nExpect: 100-continue\r\n\r\n`);
    await continued;
    socket.on('data', (c: Buffer) => (answer += c.toString()));
    socket.write(first);
    return { socket, closed };
  }

  const bytesInFlight = async () => {
    const metrics = (await app!.inject({ method: 'GET', url: '/metrics' })).body;
    return Number(/^tekil_inbox_body_bytes_in_flight (\d+)$/m.exec(metrics)?.[1] ?? Number.NaN);
  };

  const webhook = (id: string, from: string, extra: Record<string, unknown> = {}) => {
    const body = paymosBody(id, extra);
    return rawRequest(url, { path: '/in/shop', headers: Object.entries(signPaymos(body)) as Array<[string, string]>, body, from });
  };

  it('declared bodies that do not arrive hold nothing: another client is accepted', async () => {
    await start({ in_flight_max_bytes: 4 * bodyLimit });
    // Eight declared full-size bodies, twice the budget, each with one byte sent.
    for (let i = 0; i < 8; i++) await upload('127.0.0.2', '{');
    await waitUntil(async () => (await bytesInFlight()) >= 4, 5_000, 'the uploads are being read');
    const other = await webhook('evt_budget_other', '127.0.0.3');
    expect(other.status, other.body).toBe(200);
    expect(await bytesInFlight()).toBeLessThan(bodyLimit);
  });

  it('one address holds at most its share of the budget; another address still gets in', async () => {
    // The share is unset: a quarter of the budget, at least one body_limit (here one body).
    await start({ in_flight_max_bytes: 4 * bodyLimit });
    const part = Buffer.alloc(bodyLimit - 1024, 'x');
    const held = [];
    for (let i = 0; i < 4; i++) held.push(await upload('127.0.0.2', part));
    // The first upload fits the address's share; the others are refused as their bytes arrive.
    const refused = await Promise.race(held.map((h) => h.closed));
    expect(refused).toMatch(/^HTTP\/1\.1 503/);
    expect(refused).toContain('in_flight_max_bytes_per_address');
    expect(await bytesInFlight()).toBeLessThanOrEqual(bodyLimit);
    // A full-size body from another address fits beside it.
    const other = await webhook('evt_share_other', '127.0.0.3', { pad: 'y'.repeat(bodyLimit - 1024) });
    expect(other.status, other.body).toBe(200);
  });

  it('a body that stops arriving is cut (408) and its bytes given back, long before request_timeout', async () => {
    await start({ in_flight_max_bytes: 4 * bodyLimit, body_min_rate: '1kb', body_rate_window: '500ms' }, { request_timeout: '10m', headers_timeout: '10s' });
    const stalled = await upload('127.0.0.2', Buffer.alloc(bodyLimit / 2, 'x'));
    await waitUntil(async () => (await bytesInFlight()) >= bodyLimit / 2, 5_000, 'the half body is held');
    // Without a minimum rate this waits for the ten-minute request timeout.
    const answer = await stalled.closed;
    expect(answer).toMatch(/HTTP\/1\.1 408/);
    expect(answer).toContain('body_min_rate');
    expect(await bytesInFlight()).toBe(0);
  }, 20_000);
});

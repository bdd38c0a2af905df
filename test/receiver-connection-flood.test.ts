import net from 'node:net';
import { afterEach, beforeAll, afterAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createTestDb, type TestDb } from './helpers/db.js';
import { paymosBody, receiverConfig, signPaymos, testContext } from './helpers/receiver.js';
import { rawRequest } from './helpers/raw-http.js';
import { waitUntil } from './helpers/wait.js';
import { buildApp } from '../src/app.js';
import type { ConfigInput } from '../src/config/index.js';

const ADMIN_TOKEN = 'admin-token-for-the-connection-flood-test';

/**
 * Connections are a bounded resource (`server.max_connections`). A few hundred clients that each send
 * one request a minute on a kept-alive connection would hold every slot, and every webhook and the
 * admin API would get 503 while they do. The idlest connections are closed to make room, and one
 * client address may hold at most `server.max_connections_per_address` of them. The shape of the
 * flood is kept, scaled down: 20 connections instead of 500.
 */
describe('a flood of connections', () => {
  let t: TestDb;
  let app: FastifyInstance | undefined;
  const sockets: net.Socket[] = [];
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

  async function start(server: ConfigInput['server']): Promise<string> {
    const ctx = testContext(t.db, receiverConfig({ server: { body_limit: 64 * 1024, ...server } }));
    app = await buildApp({ ctx, roles: new Set(['receiver', 'api']), adminToken: ADMIN_TOKEN });
    return app.listen({ host: '127.0.0.1', port: 0 });
  }

  const openConnections = () => new Promise<number>((resolve, reject) => app!.server.getConnections((err, n) => (err ? reject(err) : resolve(n))));

  /** A kept-alive connection from `from` that sends one request, reads its answer and then sits idle. */
  async function idleKeepAlive(url: string, from: string): Promise<net.Socket> {
    const socket = net.connect({ port: Number(new URL(url).port), host: '127.0.0.1', localAddress: from });
    sockets.push(socket);
    socket.on('error', () => {});
    await new Promise<void>((resolve, reject) => {
      socket.once('data', (c: Buffer) => (c.toString().startsWith('HTTP/1.1 200') ? resolve() : reject(new Error(c.toString()))));
      socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    });
    return socket;
  }

  /**
   * A connection from `from` that sends a webhook's headers and part of its body, and holds it (busy).
   * With `admitted`, resolves once the server has read the headers (it answers `100 Continue`).
   */
  async function busyUpload(url: string, from: string, admitted = true): Promise<net.Socket> {
    const socket = net.connect({ port: Number(new URL(url).port), host: '127.0.0.1', localAddress: from });
    sockets.push(socket);
    socket.on('error', () => {});
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    const continued = new Promise<void>((resolve) => socket.once('data', () => resolve()));
    socket.write('POST /in/shop HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\nExpect: 100-continue\r\n\r\n');
    if (!admitted) return socket;
    await continued;
    socket.write('{"pad":"');
    return socket;
  }

  const webhook = (url: string, id: string) => {
    const body = paymosBody(id);
    return rawRequest(url, { path: '/in/shop', headers: Object.entries(signPaymos(body)) as Array<[string, string]>, body });
  };
  const signedHook = (id: string) => {
    const body = paymosBody(id);
    return { headers: Object.entries(signPaymos(body)) as Array<[string, string]>, body };
  };
  const admin = (url: string) => rawRequest(url, { method: 'GET', path: '/api/v1/inbox', headers: [['Authorization', `Bearer ${ADMIN_TOKEN}`]] });

  it('idle keep-alive connections filling max_connections are closed, idlest first, to let webhooks and the admin API in', async () => {
    const url = await start({ max_connections: 20, max_connections_per_address: 20 });
    const flood: net.Socket[] = [];
    for (let i = 0; i < 20; i++) flood.push(await idleKeepAlive(url, '127.0.0.2'));
    await waitUntil(async () => (await openConnections()) === 20, 5_000, 'the flood holds every connection');

    const accepted = await webhook(url, 'evt_after_flood');
    expect(accepted.status, accepted.body).toBe(200);
    expect(JSON.parse(accepted.body)).toEqual({ status: 'accepted' });
    const listed = await admin(url);
    expect(listed.status, listed.body).toBe(200);
    // The two oldest idle connections made room; the rest of the flood is still open.
    await waitUntil(async () => flood[0]!.destroyed || flood[0]!.readableEnded, 5_000, 'the idlest connection closed');
    expect(flood.slice(2).every((s) => !s.readableEnded && !s.destroyed)).toBe(true);
  });

  it('one address holds at most max_connections_per_address; past it (all busy) it is refused, and others still get in', async () => {
    // Default: a tenth of max_connections.
    const url = await start({ max_connections: 100, request_timeout: '10s', headers_timeout: '10s' });
    for (let i = 0; i < 10; i++) await busyUpload(url, '127.0.0.2');
    await waitUntil(async () => (await openConnections()) === 10, 5_000, 'ten busy connections from 127.0.0.2');

    const eleventh = await busyUpload(url, '127.0.0.2', false);
    const refusal = await new Promise<string>((resolve) => {
      let text = '';
      eleventh.on('data', (c: Buffer) => (text += c.toString()));
      eleventh.on('close', () => resolve(text));
    });
    expect(refusal).toMatch(/^HTTP\/1\.1 503/);
    expect(refusal).toMatch(/\r\nretry-after: 5\r\n/i);
    expect(refusal).toContain('server.max_connections_per_address');

    expect((await webhook(url, 'evt_other_address')).status).toBe(200);
    expect((await admin(url)).status).toBe(200);
  });

  /** A connection from `from` that sends the start of a request's headers, `bytes` bytes of it, and holds. */
  async function slowHeaders(url: string, from: string, bytes: number): Promise<net.Socket> {
    const socket = net.connect({ port: Number(new URL(url).port), host: '127.0.0.1', localAddress: from });
    sockets.push(socket);
    socket.on('error', () => {});
    socket.on('data', () => {});
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    socket.write('POST /in/shop HTTP/1.1\r\nHost: x\r\nX-Pad: '.padEnd(bytes, 'x').slice(0, bytes));
    return socket;
  }

  /** Until the server holds exactly the flood connections the clients still have open (refused ones closed). */
  const settled = (flood: net.Socket[]) =>
    waitUntil(async () => (await openConnections()) === flood.filter((s) => !s.destroyed && !s.readableEnded).length, 10_000, 'the flood settled');

  it('slow headers from two addresses cannot fill max_connections: by default one address holds a tenth', async () => {
    // Scaled down from 500 connections from two addresses, sending a header byte every 2 s.
    const url = await start({ max_connections: 40, request_timeout: '30s', headers_timeout: '30s' });
    const flood: net.Socket[] = [];
    for (let i = 0; i < 20; i++) flood.push(await slowHeaders(url, '127.0.0.2', 10), await slowHeaders(url, '127.0.0.3', 10));
    await settled(flood);
    expect(await openConnections()).toBeLessThanOrEqual(8);
    const accepted = await rawRequest(url, { path: '/in/shop', ...signedHook('evt_third_address'), from: '127.0.0.4' });
    expect(accepted.status, accepted.body).toBe(200);
    const listed = await rawRequest(url, { method: 'GET', path: '/api/v1/inbox', headers: [['Authorization', `Bearer ${ADMIN_TOKEN}`]], from: '127.0.0.4' });
    expect(listed.status, listed.body).toBe(200);
  });

  it('full of incomplete requests, the slowest one is closed to let a new connection in', async () => {
    const url = await start({ max_connections: 10, max_connections_per_address: 10, request_timeout: '30s', headers_timeout: '30s' });
    const serverSide: net.Socket[] = [];
    app!.server.on('connection', (s: net.Socket) => serverSide.push(s));
    // One that sent 2 bytes of headers (the slowest, and the first to have waited a second), then nine that sent 40.
    const slowest = await slowHeaders(url, '127.0.0.2', 2);
    const flood = [slowest];
    for (let i = 0; i < 9; i++) flood.push(await slowHeaders(url, '127.0.0.2', 40));
    await waitUntil(() => serverSide.length === 10 && serverSide.every((s) => s.bytesRead > 0), 5_000, 'the server has read every flood connection');
    // Requests younger than a second are never taken for slow; until then the webhook is refused.
    await waitUntil(
      async () => (await rawRequest(url, { path: '/in/shop', ...signedHook('evt_made_room'), from: '127.0.0.3' })).status === 200,
      15_000,
      'the webhook let in',
    );
    await waitUntil(() => slowest.destroyed || slowest.readableEnded, 5_000, 'the slowest request closed');
    expect(flood.slice(1).every((s) => !s.destroyed && !s.readableEnded)).toBe(true);
  }, 30_000);
});

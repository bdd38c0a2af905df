import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createTestDb, type TestDb } from './helpers/db.js';
import { paymosBody, receiverApp, receiverConfig, signPaymos } from './helpers/receiver.js';
import { rawRequest } from './helpers/raw-http.js';
import { waitUntil } from './helpers/wait.js';

/**
 * A client that sends its body one byte at a time holds a connection (and a file descriptor) for as
 * long as it likes unless the server bounds the whole request. With many of them, real webhooks
 * starve. The server cuts slow requests after `server.request_timeout` and refuses connections past
 * `server.max_connections` with a 503 the provider retries.
 */
describe('slow clients', () => {
  let t: TestDb;
  let app: FastifyInstance;
  let url: string;
  beforeAll(async () => {
    t = await createTestDb();
    const config = receiverConfig({
      server: { body_limit: 64 * 1024, request_timeout: '1s', headers_timeout: '1s', max_connections: 3, max_connections_per_address: 3 },
    });
    ({ app } = await receiverApp(t.db, config));
    url = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await app?.close();
    await t?.close();
  });

  /**
   * Opens a connection that sends a signed webhook's headers and then one body byte every 100 ms,
   * never finishing. Resolves `closed` with what the server answered once it closes the connection.
   */
  async function trickle(id: string): Promise<{ closed: Promise<string> }> {
    const body = paymosBody(id);
    const headers = Object.entries(signPaymos(body))
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    const socket = net.connect(Number(new URL(url).port), '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    socket.write(`POST /in/shop HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n${headers}\r\n`);
    let sent = 0;
    // The attack itself: bytes far apart, never the whole body.
    const drip = setInterval(() => {
      if (sent < body.length - 1 && socket.writable) socket.write(body[sent++]!);
    }, 100);
    let answer = '';
    socket.on('data', (c: Buffer) => (answer += c.toString()));
    socket.on('error', () => {});
    const closed = new Promise<string>((resolve) =>
      socket.once('close', () => {
        clearInterval(drip);
        resolve(answer);
      }),
    );
    return { closed };
  }

  const openConnections = () => new Promise<number>((resolve, reject) => app.server.getConnections((err, n) => (err ? reject(err) : resolve(n))));

  it('cuts a connection that trickles its body one byte at a time', async () => {
    const slow = await trickle('evt_trickle');
    // Without a request timeout this never settles and the test times out.
    const answer = await slow.closed;
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
  });

  it('with every connection taken by slow clients, a real webhook gets in: the slowest is closed to make room, or they are cut', async () => {
    const slow = await Promise.all([trickle('evt_s1'), trickle('evt_s2'), trickle('evt_s3')]);
    await waitUntil(async () => (await openConnections()) === 3, 5_000, 'three slow connections open');
    const body = paymosBody('evt_real');
    const headers = Object.entries(signPaymos(body)) as Array<[string, string]>;
    // Once a trickle has been arriving for a second the server closes the slowest for a newcomer
    // (until then the newcomer gets 503 with Retry-After); the request timeout cuts the rest.
    let answer = await rawRequest(url, { path: '/in/shop', headers, body });
    await waitUntil(
      async () => {
        answer = await rawRequest(url, { path: '/in/shop', headers, body });
        return answer.status !== 503;
      },
      10_000,
      'the webhook let in',
    );
    expect(answer.status, answer.body).toBe(200);
    const closed = await Promise.all(slow.map((s) => s.closed));
    expect(closed.every((a) => /^HTTP\/1\.1 (408|503)/.test(a))).toBe(true);
  });
});

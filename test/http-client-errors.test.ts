import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createTestDb, type TestDb } from './helpers/db.js';
import { receiverApp, receiverConfig } from './helpers/receiver.js';
import { rawExchange } from './helpers/raw-http.js';

/**
 * Requests Node's HTTP parser refuses, and requests its timeouts cut, are answered before any route
 * runs. They carry the catalogue's codes like every other refusal (docs/errors.md), not the
 * framework's `{"error":"Bad Request"}`.
 */
describe("the HTTP server's own refusals", () => {
  let t: TestDb;
  let app: FastifyInstance;
  let url: string;
  beforeAll(async () => {
    t = await createTestDb();
    ({ app } = await receiverApp(t.db, receiverConfig({ server: { body_limit: 64 * 1024, request_timeout: '1s', headers_timeout: '1s' } })));
    url = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await app?.close();
    await t?.close();
  });

  it('a malformed request is 400 REQUEST_MALFORMED', async () => {
    const answer = await rawExchange(url, 'POST /in/shop HTTP/1.1\r\nHost: x\r\nBroken header line\r\nContent-Length: 0\r\n\r\n');
    expect(answer.status).toBe(400);
    expect(answer.headers).toMatch(/\r\ncontent-type: application\/json/i);
    expect(JSON.parse(answer.body)).toMatchObject({ error: 'REQUEST_MALFORMED' });
  });

  it('headers over the size limit are 431 HEADERS_TOO_LARGE', async () => {
    const answer = await rawExchange(url, `POST /in/shop HTTP/1.1\r\nHost: x\r\nX-Padding: ${'a'.repeat(20_000)}\r\nContent-Length: 0\r\n\r\n`);
    expect(answer.status).toBe(431);
    expect(JSON.parse(answer.body)).toMatchObject({ error: 'HEADERS_TOO_LARGE' });
  });

  it('a request not sent in time is 408 REQUEST_TIMEOUT', async () => {
    // Headers never finished: the headers timeout (1 s here) cuts the connection.
    const answer = await rawExchange(url, 'POST /in/shop HTTP/1.1\r\nHost: x\r\n');
    expect(answer.status).toBe(408);
    expect(JSON.parse(answer.body)).toMatchObject({ error: 'REQUEST_TIMEOUT' });
  });
});

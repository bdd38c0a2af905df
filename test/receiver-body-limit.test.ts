import http from 'node:http';
import net from 'node:net';
import { execFile } from 'node:child_process';
import { writeFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createTestDb, type TestDb } from './helpers/db.js';
import { countRows, receiverApp, receiverConfig } from './helpers/receiver.js';

/**
 * A body over `server.body_limit` is answered 413 BODY_TOO_LARGE. Answering and closing while the
 * client is still writing makes the kernel reset the connection, and Node's clients (fetch,
 * http.request) then report EPIPE or ECONNRESET instead of the 413: the server reads the rest of the
 * body (up to a bound) and drops it before it closes.
 *
 * On loopback a 2 MiB body fits in the sockets' buffers at once; a sender on a real network is still
 * writing when the answer comes. The clients here send at about 8 MiB/s (pieces 16 ms apart), as
 * over a 100 Mbit/s link.
 */
describe('a body over the limit', () => {
  let t: TestDb;
  let app: FastifyInstance;
  let url: string;
  const limit = 1024 * 1024;
  const twoMiB = Buffer.alloc(2 * limit, 'a');
  const pieces = 16;
  const piece = (i: number) => twoMiB.subarray(i * (twoMiB.length / pieces), (i + 1) * (twoMiB.length / pieces));
  beforeAll(async () => {
    t = await createTestDb();
    ({ app } = await receiverApp(t.db, receiverConfig({ server: { body_limit: limit } })));
    url = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await app?.close();
    await t?.close();
  });

  it('is read to its end before the connection is closed, so a sender still writing reads the answer', async () => {
    // A sender on a slow link: the headers, then 64 KiB every 10 ms. The socket stays open for writing
    // after the server's FIN (as a TCP stack does), so a write to a closed connection shows as an error.
    const socket = net.connect({ port: Number(new URL(url).port), host: '127.0.0.1', allowHalfOpen: true });
    const events: string[] = [];
    let answer = '';
    socket.on('data', (c: Buffer) => (answer += c.toString()));
    socket.on('end', () => events.push('server closed'));
    const failed = new Promise<string>((resolve) => socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message)));
    socket.write(`POST /in/shop HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${twoMiB.length}\r\n\r\n`);
    const sent = (async () => {
      for (let offset = 0; offset < twoMiB.length; offset += 64 * 1024) {
        if (offset > 0) await sleep(10);
        if (socket.destroyed) return 'destroyed';
        await new Promise<void>((resolve, reject) => socket.write(twoMiB.subarray(offset, offset + 64 * 1024), (err) => (err ? reject(err) : resolve())));
      }
      events.push('all sent');
      return 'sent';
    })();
    const outcome = await Promise.race([sent, failed]);
    await new Promise<void>((resolve) => (events.includes('server closed') ? resolve() : socket.once('end', () => resolve())));
    socket.destroy();
    expect(outcome).toBe('sent');
    expect(events).toEqual(['all sent', 'server closed']);
    expect(answer).toMatch(/^HTTP\/1\.1 413/);
    expect(answer).toContain('"error":"BODY_TOO_LARGE"');
  });

  it('is answered 413 BODY_TOO_LARGE to fetch', async () => {
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        for (let i = 0; i < pieces; i++) {
          controller.enqueue(piece(i));
          await sleep(16);
        }
        controller.close();
      },
    });
    const res = await fetch(`${url}/in/shop`, { method: 'POST', headers: { 'content-type': 'application/json' }, body, duplex: 'half' } as RequestInit);
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ error: 'BODY_TOO_LARGE' });
  });

  /** One POST by http.request; `chunked` sends no Content-Length, so the limit is found while reading. */
  function post(chunked: boolean): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const headers: http.OutgoingHttpHeaders = { 'content-type': 'application/json' };
      if (!chunked) headers['content-length'] = twoMiB.length;
      const req = http.request(`${url}/in/shop`, { method: 'POST', headers }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      void (async () => {
        for (let i = 0; i < pieces && !req.destroyed; i++) {
          req.write(piece(i));
          await sleep(16);
        }
        req.end();
      })();
    });
  }

  it('is answered 413 BODY_TOO_LARGE to http.request, with a Content-Length or chunked', async () => {
    for (const chunked of [false, true]) {
      const res = await post(chunked);
      expect(res.status, `chunked: ${chunked}`).toBe(413);
      expect(JSON.parse(res.body)).toMatchObject({ error: 'BODY_TOO_LARGE' });
    }
  });

  it('is answered 413 BODY_TOO_LARGE to curl', async () => {
    const file = join(tmpdir(), `tekil-body-limit-${process.pid}.bin`);
    await writeFile(file, twoMiB);
    try {
      const out = await new Promise<string>((resolve, reject) =>
        execFile(
          'curl',
          ['-sS', '--limit-rate', '8M', '-w', '\n%{http_code}', '-H', 'content-type: application/json', '--data-binary', `@${file}`, `${url}/in/shop`],
          (err, stdout) => (err ? reject(err) : resolve(stdout)),
        ),
      );
      const [body, status] = out.split('\n');
      expect(status).toBe('413');
      expect(JSON.parse(body!)).toMatchObject({ error: 'BODY_TOO_LARGE' });
    } finally {
      await rm(file, { force: true });
    }
  });

  it('is not read for ever: past four times the limit the connection is closed', async () => {
    // A chunked body that never ends: the server must give up reading it long before its timeouts.
    const started = Date.now();
    await new Promise<void>((resolve) => {
      const req = http.request(`${url}/in/shop`, { method: 'POST', headers: { 'content-type': 'application/json' } });
      req.on('error', () => resolve());
      req.on('response', (res) => {
        res.resume();
        res.on('close', () => resolve());
      });
      const chunk = Buffer.alloc(256 * 1024, 'a');
      const pump = () => {
        while (!req.destroyed && req.write(chunk));
        if (!req.destroyed) req.once('drain', pump);
      };
      pump();
    });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(await countRows(t.db)).toBe(0);
  });
});

import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SinkRequest {
  headers: IncomingHttpHeaders;
  body: Buffer;
  at: number;
  path: string;
}

/** What the sink answers to the n-th request (1-based); `hang` never answers; `delayMs` answers late. */
export interface SinkAnswer {
  status?: number;
  headers?: Record<string, string>;
  body?: string;
  hang?: boolean;
  delayMs?: number;
  /** Answers once this resolves (a handshake with the test); a rejection drops the connection. */
  after?: PromiseLike<unknown>;
  /** Sends the headers at once, then the body one byte every `everyMs`, `bytes` times (a slow answer). */
  trickle?: { bytes: number; everyMs: number };
}

export interface Sink {
  url: string;
  requests: SinkRequest[];
  waitFor(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** A real HTTP receiver on 127.0.0.1 that records every request and answers as told. */
export async function startSink(answer: (n: number, req: SinkRequest) => SinkAnswer = () => ({ status: 200 })): Promise<Sink> {
  const requests: SinkRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const recorded = { headers: req.headers, body: Buffer.concat(chunks), at: Date.now(), path: req.url ?? '/' };
      requests.push(recorded);
      const a = answer(requests.length, recorded);
      if (a.hang) return;
      if (a.trickle) {
        const { bytes, everyMs } = a.trickle;
        res.writeHead(a.status ?? 200, { 'content-type': 'text/plain', ...a.headers });
        res.flushHeaders();
        let sent = 0;
        const timer = setInterval(() => {
          if (res.destroyed) return clearInterval(timer);
          res.write('.');
          if (++sent >= bytes) {
            clearInterval(timer);
            res.end();
          }
        }, everyMs);
        res.on('close', () => clearInterval(timer));
        return;
      }
      const send = () => {
        res.writeHead(a.status ?? 200, a.headers ?? {});
        res.end(a.body ?? 'ok');
      };
      if (a.after) a.after.then(send, () => res.destroy());
      else if (a.delayMs) setTimeout(send, a.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    requests,
    async waitFor(count, timeoutMs = 10_000) {
      await waitUntil(() => requests.length >= count, timeoutMs, `sink: ${count} requests (got ${requests.length})`);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

import { waitUntil } from './wait.js';

export { waitUntil };

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';

/**
 * An HTTP proxy between the simulator's dispatcher and the receiver, where the network's faults are
 * made on purpose. Each request draws its fate once:
 * - `drop`: forwarded, the receiver answers, and the answer is thrown away — the sender waits out its
 *   timeout and retries a delivery the receiver already has;
 * - `delay`: held past the sender's timeout, then forwarded anyway — the sender has given up and will
 *   retry while this copy is still on its way;
 * - `duplicate`: forwarded twice at once, as a provider that sends the same event twice.
 */
export interface FaultRates {
  drop: number;
  delay: number;
  duplicate: number;
}

export interface FaultCounts {
  requests: number;
  forwarded: number;
  dropped: number;
  delayed: number;
  duplicated: number;
  /** Answers from the receiver by status code ("error" when it could not be reached). */
  answers: Record<string, number>;
  /** The receiver's slowest answer, in ms (what a provider's timeout has to cover). */
  slowestAnswerMs: number;
}

export interface FaultProxy {
  url: string;
  counts: FaultCounts;
  close(): Promise<void>;
}

const hopByHop = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive']);

export async function startFaultProxy(options: { target: string; rates: FaultRates; delayMs: number; random: () => number }): Promise<FaultProxy> {
  const target = new URL(options.target);
  const agent = new Agent({ connections: 64, headersTimeout: 60_000, bodyTimeout: 60_000 });
  const counts: FaultCounts = { requests: 0, forwarded: 0, dropped: 0, delayed: 0, duplicated: 0, answers: {}, slowestAnswerMs: 0 };
  const held = new Set<http.ServerResponse>();
  const timers = new Set<NodeJS.Timeout>();
  let closing = false;

  const forward = async (headers: Record<string, string>, body: Buffer): Promise<{ status: number; body: Buffer; type: string | undefined }> => {
    counts.forwarded++;
    const started = Date.now();
    try {
      const res = await request(target, { method: 'POST', headers, body, dispatcher: agent });
      const answer = Buffer.from(await res.body.arrayBuffer());
      counts.answers[res.statusCode] = (counts.answers[res.statusCode] ?? 0) + 1;
      counts.slowestAnswerMs = Math.max(counts.slowestAnswerMs, Date.now() - started);
      const type = res.headers['content-type'];
      return { status: res.statusCode, body: answer, type: typeof type === 'string' ? type : undefined };
    } catch {
      counts.answers.error = (counts.answers.error ?? 0) + 1;
      return { status: 502, body: Buffer.from('{"error":"receiver unreachable"}'), type: 'application/json' };
    }
  };

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    const body = await readRequestBody(req);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (!hopByHop.has(name) && typeof value === 'string') headers[name] = value;
    }
    counts.requests++;
    const draw = options.random();
    const { drop, delay, duplicate } = options.rates;
    if (draw < drop) {
      counts.dropped++;
      await forward(headers, body);
      // The answer is lost: the sender's own timeout ends this request (or close() does).
      held.add(res);
      res.on('close', () => held.delete(res));
      return;
    }
    if (draw < drop + delay) {
      counts.delayed++;
      await sleep(options.delayMs);
      if (closing) return;
    }
    let answer;
    if (draw >= drop + delay && draw < drop + delay + duplicate) {
      counts.duplicated++;
      [answer] = await Promise.all([forward(headers, body), forward(headers, body)]);
    } else {
      answer = await forward(headers, body);
    }
    if (res.destroyed) return;
    res.writeHead(answer.status, answer.type ? { 'content-type': answer.type } : {});
    res.end(answer.body);
  };

  const server = http.createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}${target.pathname}${target.search}`,
    counts,
    async close() {
      closing = true;
      for (const timer of timers) clearTimeout(timer);
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await agent.close();
    },
  };
}

/** Collected with events: async iteration would destroy the request, and the answer with it, once read. */
function readRequestBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

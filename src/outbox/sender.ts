import { Agent } from 'undici';
import { isTekilError } from '../errors.js';
import type { DestinationGuard } from './destination-guard.js';
import { parseRetryAfter } from './ladders.js';

/** What one HTTP attempt produced, for the history and the next-attempt decision. */
export interface AttemptOutcome {
  startedAt: Date;
  durationMs: number;
  succeeded: boolean;
  statusCode: number | null;
  error: string | null;
  responseBody: string | null;
  retryAfterMs: number | undefined;
}

export interface SendRequest {
  url: string;
  body: Buffer;
  /** The signature headers; the sender adds content-type and user-agent to this object. */
  headers: Record<string, string>;
  timeoutMs: number;
}

/** A destination URL split once into what a request needs. */
interface Destination {
  url: URL;
  origin: string;
  path: string;
}

/** Bytes of the answer kept in the history. */
export const RESPONSE_KEEP_BYTES = 4096;

/**
 * Posts exact bytes and reports the outcome; never throws. Redirects are not followed (a 3xx is a
 * failure), only 2xx counts as success, and every connection goes through the destination guard.
 */
export class Sender {
  private readonly agent: Agent;

  constructor(private readonly guard: DestinationGuard) {
    this.agent = new Agent({
      connect: { lookup: guard.lookup },
      keepAliveTimeout: 30_000,
    });
  }

  async send(req: SendRequest): Promise<AttemptOutcome> {
    const startedAt = new Date();
    const t0 = performance.now();
    let statusCode: number | null = null;
    let error: string | null;
    let responseBody: string | null = null;
    let retryAfterMs: number | undefined;
    try {
      const destination = this.parse(req.url);
      this.guard.checkLiteral(destination.url);
      const headers = req.headers;
      headers['content-type'] = 'application/json';
      headers['user-agent'] = 'tekil';
      // The agent's own request(): the top-level request() would parse the URL again on every call.
      const res = await this.agent.request({
        origin: destination.origin,
        path: destination.path,
        method: 'POST',
        headers,
        body: req.body,
        // undici's own timers (cheaper than an AbortSignal per request): the answer's headers must
        // arrive within the timeout, and the body may not stall longer than it.
        headersTimeout: req.timeoutMs,
        bodyTimeout: req.timeoutMs,
      });
      const length = Number(res.headers['content-length']);
      responseBody = length <= RESPONSE_KEEP_BYTES ? await res.body.text() : await readHead(res.body);
      statusCode = res.statusCode;
      if (statusCode >= 200 && statusCode < 300) {
        error = null;
      } else {
        error = statusCode >= 300 && statusCode < 400 ? `redirect (HTTP ${statusCode}) not followed` : `HTTP ${statusCode}`;
        const retryAfter = res.headers['retry-after'];
        retryAfterMs = parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter);
      }
    } catch (err) {
      error = describeError(err, req.timeoutMs);
    }
    return {
      startedAt,
      durationMs: Math.round(performance.now() - t0),
      succeeded: error === null,
      statusCode,
      error,
      responseBody,
      retryAfterMs,
    };
  }

  /** Destinations repeat: parse each URL once (a bounded cache; URL objects are not changed). */
  private readonly destinations = new Map<string, Destination>();
  private parse(text: string): Destination {
    let destination = this.destinations.get(text);
    if (!destination) {
      const url = new URL(text);
      destination = { url, origin: url.origin, path: `${url.pathname}${url.search}` };
      if (this.destinations.size >= 10_000) this.destinations.clear();
      this.destinations.set(text, destination);
    }
    return destination;
  }

  /** Closes idle connections; with `abort`, also cuts requests still in flight. */
  async close(abort = false): Promise<void> {
    await (abort ? this.agent.destroy() : this.agent.close());
  }
}

async function readHead(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= RESPONSE_KEEP_BYTES) break; // leaving the loop discards the rest of an oversized answer
  }
  return Buffer.concat(chunks).subarray(0, RESPONSE_KEEP_BYTES).toString('utf8');
}

/** A short, secret-free description of a network failure. */
function describeError(err: unknown, timeoutMs: number): string {
  for (let e: unknown = err; e; e = (e as { cause?: unknown }).cause) {
    if (isTekilError(e, 'FORBIDDEN_DESTINATION')) return e.message;
  }
  const e = err as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_BODY_TIMEOUT' || e.code === 'UND_ERR_CONNECT_TIMEOUT') {
    return `timeout after ${timeoutMs} ms`;
  }
  const code = e.code ?? e.cause?.code;
  const message = e.cause?.message ?? e.message ?? String(err);
  return code ? `${code}: ${message}` : message;
}

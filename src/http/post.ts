import { Agent, type Dispatcher } from 'undici';
import { isTekilError } from '../errors.js';
import type { DestinationGuard } from '../outbox/destination-guard.js';

/**
 * The one way tekil POSTs to someone else: the dispatcher to endpoints, the worker to a source's
 * forward URL. Both get the same meaning of `timeout` and the same destination guard; what differs is
 * the guard's policy (which networks it allows) and what the caller does with the answer.
 */
export interface PostRequest {
  url: string;
  headers: Record<string, string>;
  body: Buffer;
  /**
   * A deadline for the whole exchange, from asking for a connection to the last byte of the answer: an
   * answer whose headers came in time but whose body trickles past it is a timeout, not a success.
   */
  timeoutMs: number;
  /** Bytes of the answer's body to keep (the rest is read and discarded); 0 keeps none. */
  keepBytes: number;
}

/** Why a request got no complete answer. */
export type PostFailure =
  /** The deadline passed before the last byte of the answer. */
  | 'timeout'
  /** The guard refused the destination's address. */
  | 'forbidden'
  /**
   * tekil could not build the request (a header value the HTTP client refuses, a URL it cannot use):
   * the same request would fail the same way on every retry, so callers treat it as permanent.
   */
  | 'request'
  /** Connection refused, reset, DNS failure, TLS error…: the network, worth a retry. */
  | 'network';

export type PostResult =
  | { ok: true; startedAt: Date; durationMs: number; statusCode: number; headers: Record<string, string | string[] | undefined>; body: string | null }
  | { ok: false; startedAt: Date; durationMs: number; failure: PostFailure; error: string };

interface Destination {
  url: URL;
  origin: string;
  path: string;
}

/** Raised into the request when its deadline passes; recognised by identity, so no message parsing. */
class DeadlineExceeded extends Error {
  constructor(timeoutMs: number) {
    super(`timeout after ${timeoutMs} ms`);
    this.name = 'DeadlineExceeded';
  }
}

export interface HttpPosterOptions {
  guard: DestinationGuard;
  keepAliveTimeoutMs?: number;
  /** Connections per origin (undici's default is unlimited). */
  connections?: number;
}

export class HttpPoster {
  private readonly agent: Agent;
  private readonly guard: DestinationGuard;
  /** Destinations repeat: each URL is parsed once (a bounded cache; URL objects are not changed). */
  private readonly destinations = new Map<string, Destination>();

  constructor(options: HttpPosterOptions) {
    this.guard = options.guard;
    this.agent = new Agent({
      // The guard sees the address each connection really uses, so DNS rebinding cannot slip past it.
      connect: { lookup: options.guard.lookup },
      keepAliveTimeout: options.keepAliveTimeoutMs ?? 30_000,
      ...(options.connections === undefined ? {} : { connections: options.connections }),
    });
  }

  /** Posts the exact bytes; never throws: every failure is a result. No redirect is followed. */
  async post(req: PostRequest): Promise<PostResult> {
    const startedAt = new Date();
    const t0 = performance.now();
    const elapsed = () => Math.round(performance.now() - t0);
    const controller = new AbortController();
    const deadline = new DeadlineExceeded(req.timeoutMs);
    const timer = setTimeout(() => controller.abort(deadline), req.timeoutMs);
    try {
      let destination: Destination;
      try {
        destination = this.parse(req.url);
      } catch (err) {
        return { ok: false, startedAt, durationMs: elapsed(), failure: 'request', error: `invalid URL: ${describe(err)}` };
      }
      this.guard.checkLiteral(destination.url);
      const options: Dispatcher.RequestOptions = {
        origin: destination.origin,
        path: destination.path,
        method: 'POST',
        headers: req.headers,
        body: req.body,
        signal: controller.signal,
        // The deadline above is the one that counts; undici's own timers would only cut earlier.
        headersTimeout: 0,
        bodyTimeout: 0,
      };
      const res = await this.agent.request(options);
      const body = await readBody(res.body, req.keepBytes);
      return { ok: true, startedAt, durationMs: elapsed(), statusCode: res.statusCode, headers: res.headers, body };
    } catch (err) {
      return { ok: false, startedAt, durationMs: elapsed(), failure: classify(err, controller.signal, deadline), error: describeFailure(err, deadline) };
    } finally {
      clearTimeout(timer);
    }
  }

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

/** Past this many bytes an answer is cut rather than read to its end to keep the connection. */
const DRAIN_LIMIT_BYTES = 256 * 1024;

/** Reads the whole answer (so the connection can be reused), keeping its first `keep` bytes as text. */
async function readBody(body: AsyncIterable<Buffer>, keep: number): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    if (size < keep) chunks.push(chunk);
    size += chunk.length;
    // A huge answer is not worth reading to the end: leaving the loop closes the connection instead.
    if (size >= keep && size > DRAIN_LIMIT_BYTES) break;
  }
  return keep > 0 ? Buffer.concat(chunks).subarray(0, keep).toString('utf8') : null;
}

/** undici's codes for a request it refused to build or send as given. */
const REQUEST_ERRORS = new Set(['UND_ERR_INVALID_ARG', 'ERR_INVALID_ARG_TYPE', 'ERR_INVALID_CHAR', 'ERR_INVALID_URL', 'UND_ERR_NOT_SUPPORTED']);

function classify(err: unknown, signal: AbortSignal, deadline: DeadlineExceeded): PostFailure {
  if (signal.aborted && signal.reason === deadline) return 'timeout';
  for (let e: unknown = err; e; e = (e as { cause?: unknown }).cause) {
    if (e === deadline) return 'timeout';
    if (isTekilError(e, 'FORBIDDEN_DESTINATION')) return 'forbidden';
  }
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && REQUEST_ERRORS.has(code) ? 'request' : 'network';
}

/** A short, secret-free description: codes and messages of the client, never headers or bodies. */
function describeFailure(err: unknown, deadline: DeadlineExceeded): string {
  for (let e: unknown = err; e; e = (e as { cause?: unknown }).cause) {
    if (e === deadline) return deadline.message;
    if (isTekilError(e, 'FORBIDDEN_DESTINATION')) return e.message;
  }
  return describe(err);
}

function describe(err: unknown): string {
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e.code ?? e.cause?.code;
  const message = (e.cause?.message ?? e.message ?? String(err)).slice(0, 300);
  return code ? `${code}: ${message}` : message;
}

import type { LookupAddress } from 'node:dns';
import type { EventEmitter } from 'node:events';
import { isIP } from 'node:net';
import { Agent, ProxyAgent, type Dispatcher } from 'undici';
import { isTekilError } from '../errors.js';
import type { DestinationGuard } from './destination-guard.js';

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

const MAX_TIMER_MS = 2_147_483_647;

/**
 * A request's deadline, in the shape undici accepts as an abort signal (an emitter of 'abort' with
 * `aborted` and `reason`). An AbortController per request, and an Error made up front, cost the
 * dispatcher measurable CPU per delivery; this costs a timer, and its error exists only once it fires.
 */
class Deadline {
  aborted = false;
  reason: Error | undefined;
  private listener: (() => void) | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(readonly timeoutMs: number) {
    // Node runs a timer longer than 2^31 - 1 ms after 1 ms instead: never let a long deadline become none.
    this.timer = setTimeout(() => this.fire(), Math.min(timeoutMs, MAX_TIMER_MS));
  }

  private fire(): void {
    this.aborted = true;
    this.reason = new Error(`timeout after ${this.timeoutMs} ms`);
    const listener = this.listener;
    this.listener = undefined;
    listener?.();
  }

  /** What undici calls to listen (it only ever adds one listener, for 'abort'). */
  on(_event: 'abort', listener: () => void): this {
    this.listener = listener;
    return this;
  }
  once(event: 'abort', listener: () => void): this {
    return this.on(event, listener);
  }
  removeListener(_event: 'abort', listener: () => void): this {
    if (this.listener === listener) this.listener = undefined;
    return this;
  }

  clear(): void {
    clearTimeout(this.timer);
    this.listener = undefined;
  }
}

export interface HttpPosterOptions {
  guard: DestinationGuard;
  keepAliveTimeoutMs?: number;
  /** Connections per origin (undici's default is unlimited). */
  connections?: number;
  /** An HTTP proxy (`http://user:pass@proxy:3128`): every request goes through a CONNECT tunnel. */
  proxy?: string;
}

export class HttpPoster {
  private readonly agent: Agent | ProxyAgent;
  private readonly guard: DestinationGuard;
  private readonly proxied: boolean;
  /** Destinations repeat: each URL is parsed once (a bounded cache; URL objects are not changed). */
  private readonly destinations = new Map<string, Destination>();

  constructor(options: HttpPosterOptions) {
    this.guard = options.guard;
    this.proxied = options.proxy !== undefined;
    const pool = {
      keepAliveTimeout: options.keepAliveTimeoutMs ?? 30_000,
      ...(options.connections === undefined ? {} : { connections: options.connections }),
    };
    // Through a proxy, the socket goes to the proxy (its address is the operator's and usually private,
    // so it is not judged); the final destination is judged before each request instead (see post).
    // The proxy's user and password come from its URL, sent as Proxy-Authorization: Basic.
    this.agent = options.proxy
      ? new ProxyAgent({ uri: options.proxy, ...pool })
      : new Agent({
          // The guard sees the address each connection really uses, so DNS rebinding cannot slip past it.
          connect: { lookup: options.guard.lookup },
          ...pool,
        });
  }

  /** Posts the exact bytes; never throws: every failure is a result. No redirect is followed. */
  async post(req: PostRequest): Promise<PostResult> {
    const startedAt = new Date();
    const t0 = performance.now();
    const elapsed = () => Math.round(performance.now() - t0);
    const deadline = new Deadline(req.timeoutMs);
    try {
      let destination: Destination;
      try {
        destination = this.parse(req.url);
      } catch (err) {
        return { ok: false, startedAt, durationMs: elapsed(), failure: 'request', error: `invalid URL: ${describe(err)}` };
      }
      this.guard.checkLiteral(destination.url);
      if (this.proxied) await this.checkResolved(destination.url);
      const options: Dispatcher.RequestOptions = {
        origin: destination.origin,
        path: destination.path,
        method: 'POST',
        headers: req.headers,
        body: req.body,
        // undici takes an emitter as a signal; its type names Node's EventEmitter, which this imitates.
        signal: deadline as unknown as EventEmitter,
        // The deadline above is the one that counts; undici's own timers would only cut earlier.
        headersTimeout: 0,
        bodyTimeout: 0,
      };
      const res = await this.agent.request(options);
      const body = await readBody(res.body, Number(res.headers['content-length'] ?? Infinity), req.keepBytes);
      // However the answer ended, past the deadline it is a timeout (a reader may see a clean close).
      if (deadline.aborted) return { ok: false, startedAt, durationMs: elapsed(), failure: 'timeout', error: deadline.reason!.message };
      return { ok: true, startedAt, durationMs: elapsed(), statusCode: res.statusCode, headers: res.headers, body };
    } catch (err) {
      if (deadline.aborted) return { ok: false, startedAt, durationMs: elapsed(), failure: 'timeout', error: deadline.reason!.message };
      return { ok: false, startedAt, durationMs: elapsed(), failure: classify(err), error: describeFailure(err) };
    } finally {
      deadline.clear();
    }
  }

  /**
   * Through a proxy, the proxy resolves the name and connects, out of the guard's reach: the name is
   * resolved here first, through the guard, and refused when it has no permitted address.
   */
  private checkResolved(url: URL): Promise<void> {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) !== 0) return Promise.resolve(); // checkLiteral judged it
    return new Promise((resolve, reject) => {
      this.guard.lookup(host, { all: true }, (err: NodeJS.ErrnoException | null, _addresses: string | LookupAddress[]) => (err ? reject(err) : resolve()));
    });
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

/**
 * Reads the whole answer (so the connection can be reused), keeping its first `keep` bytes as text.
 * Rejects when the answer is cut short (the deadline, a reset): an incomplete answer is no answer.
 */
function readBody(body: Dispatcher.ResponseData['body'], contentLength: number, keep: number): Promise<string | null> {
  // The common case, a short answer of known length, takes undici's own (fastest) reader.
  if (keep > 0 && contentLength <= keep) return body.text();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let ended = false;
    body.on('data', (chunk: Buffer) => {
      if (size < keep) chunks.push(chunk);
      size += chunk.length;
      // A huge answer is not worth reading to the end: the connection is closed instead.
      if (size >= keep && size > DRAIN_LIMIT_BYTES) {
        ended = true;
        body.destroy();
        resolve(keep > 0 ? Buffer.concat(chunks).subarray(0, keep).toString('utf8') : null);
      }
    });
    body.on('end', () => {
      ended = true;
      resolve(keep > 0 ? Buffer.concat(chunks).subarray(0, keep).toString('utf8') : null);
    });
    body.on('error', (err: Error) => {
      if (!ended) reject(err);
    });
    body.on('close', () => {
      if (!ended) reject(new Error('the answer was cut short'));
    });
  });
}

/** undici's codes for a request it refused to build or send as given. */
const REQUEST_ERRORS = new Set(['UND_ERR_INVALID_ARG', 'ERR_INVALID_ARG_TYPE', 'ERR_INVALID_CHAR', 'ERR_INVALID_URL', 'UND_ERR_NOT_SUPPORTED']);

function classify(err: unknown): PostFailure {
  for (let e: unknown = err; e; e = (e as { cause?: unknown }).cause) {
    if (isTekilError(e, 'FORBIDDEN_DESTINATION')) return 'forbidden';
  }
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && REQUEST_ERRORS.has(code) ? 'request' : 'network';
}

/** A short, secret-free description: codes and messages of the client, never headers or bodies. */
function describeFailure(err: unknown): string {
  for (let e: unknown = err; e; e = (e as { cause?: unknown }).cause) {
    if (isTekilError(e, 'FORBIDDEN_DESTINATION')) return e.message;
  }
  // undici's words for a tunnel the proxy refused; 407 is the proxy's user or password.
  const refused = /Proxy response \((\d+)\) !== 200/.exec((err as { message?: string }).message ?? '');
  if (refused) {
    const status = Number(refused[1]);
    return `the proxy refused the tunnel: HTTP ${status}${status === 407 ? ' (proxy authentication failed: check the user and password in sending.proxy)' : ''}`;
  }
  return describe(err);
}

function describe(err: unknown): string {
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e.code ?? e.cause?.code;
  const message = (e.cause?.message ?? e.message ?? String(err)).slice(0, 300);
  return code ? `${code}: ${message}` : message;
}

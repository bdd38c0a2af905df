import type { IncomingMessage, ServerResponse } from 'node:http';
import { TekilError } from '../errors.js';

export interface BodyBudgetOptions {
  /** Body bytes held at once by the whole process (`receiver.in_flight_max_bytes`). */
  maxBytes: number;
  /** Body bytes held at once for one client address (`receiver.in_flight_max_bytes_per_address`). */
  maxBytesPerAddress: number;
  /** Bytes a second a body must keep arriving at, measured over `rateWindowMs` (0: not checked). */
  minRate: number;
  rateWindowMs: number;
}

/** What one request holds: under which address, and how many bytes. */
interface Holding {
  address: string;
  bytes: number;
}

/**
 * The body bytes this process holds for webhooks being received or waiting for their commit, and
 * their bounds: in all (`receiver.in_flight_max_bytes`) and per client address (an IPv6 /64 counting
 * as one). Without them the bound is `server.max_connections` x `server.body_limit` (500 MiB at the
 * defaults), reached by anyone who can open connections: bodies are read before their signature can
 * be checked.
 *
 * Bytes are taken as they arrive, never from what Content-Length declares: a client that declares
 * 1 MiB and sends one byte holds one byte (70 such connections once held the whole 64 MiB, and every
 * other client got 503). They are given back when the answer is sent, the connection closes, or the
 * body is refused. One address holds at most its share, so its bodies never refuse another address's.
 * A body that stops arriving (fewer than `minRate` bytes a second over a window) is cut with 408: what
 * it holds is memory nobody else can use.
 *
 * One body alone (in all, or from its address) is always let in whole, so bounds below
 * `server.body_limit` cannot refuse a delivery for ever.
 */
export class BodiesInFlight {
  private held = 0;
  private readonly perAddress = new Map<string, number>();
  private readonly taken = new WeakMap<IncomingMessage, Holding>();
  private readonly answered = new WeakSet<IncomingMessage>();

  constructor(private readonly options: BodyBudgetOptions) {}

  get bytes(): number {
    return this.held;
  }

  /** Gives the request's bytes back once its answer is sent or its connection is gone. */
  track(req: IncomingMessage, res: ServerResponse): void {
    const release = () => this.release(req);
    res.once('finish', release);
    res.once('close', release);
  }

  /** Takes `bytes` more for `req`, or says which bound refuses them. */
  private take(req: IncomingMessage, address: string, bytes: number): 'ok' | 'all' | 'address' {
    if (this.answered.has(req)) return 'all';
    const mine = this.taken.get(req) ?? { address, bytes: 0 };
    const fromAddress = this.perAddress.get(address) ?? 0;
    // Bytes held by other requests: when none, this body is let in whole.
    if (this.held - mine.bytes > 0 && this.held + bytes > this.options.maxBytes) return 'all';
    if (fromAddress - mine.bytes > 0 && fromAddress + bytes > this.options.maxBytesPerAddress) return 'address';
    this.held += bytes;
    this.perAddress.set(address, fromAddress + bytes);
    mine.bytes += bytes;
    this.taken.set(req, mine);
    return 'ok';
  }

  private release(req: IncomingMessage): void {
    this.answered.add(req);
    const mine = this.taken.get(req);
    if (!mine) return;
    this.taken.delete(req);
    this.held -= mine.bytes;
    const left = (this.perAddress.get(mine.address) ?? 0) - mine.bytes;
    if (left > 0) this.perAddress.set(mine.address, left);
    else this.perAddress.delete(mine.address);
  }

  /**
   * Reads a webhook's body from `address` (its client's, see addressKey) as raw bytes, within `limit`
   * and the bounds. Over the limit: BODY_TOO_LARGE; over a bound: OVERLOADED (503; the caller's error
   * path reads the rest of the body and drops it before it answers, see discardRest); arriving too
   * slowly: REQUEST_TIMEOUT (408, the connection is closed).
   */
  read(req: IncomingMessage, limit: number, address: string): Promise<Buffer> {
    const length = req.headers['content-length'];
    const declared = length === undefined ? undefined : Number(length);
    if (declared !== undefined && declared > limit) return Promise.reject(tooLarge(limit));
    return new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      let received = 0;
      let receivedAtCheck = 0;
      const onData = (chunk: Buffer) => {
        received += chunk.length;
        if (received > limit) return fail(tooLarge(limit));
        const taken = this.take(req, address, chunk.length);
        if (taken === 'ok') chunks.push(chunk);
        else fail(this.overloaded(taken));
      };
      const onEnd = () => {
        stop();
        resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received));
      };
      const onCut = () => fail(new TekilError('REQUEST_MALFORMED', 'the connection closed before the body was complete'));
      const { minRate, rateWindowMs } = this.options;
      // Each window must bring its share of bytes, or what is left of a declared body.
      const rateCheck =
        minRate > 0
          ? setInterval(() => {
              const due = Math.min((minRate * rateWindowMs) / 1000, declared === undefined ? Number.POSITIVE_INFINITY : declared - received);
              if (received - receivedAtCheck < due) fail(this.tooSlow());
              receivedAtCheck = received;
            }, rateWindowMs)
          : undefined;
      rateCheck?.unref();
      const stop = () => {
        clearInterval(rateCheck);
        req.off('data', onData);
        req.off('end', onEnd);
        req.off('error', onCut);
        req.off('close', onCut);
      };
      const fail = (err: TekilError): void => {
        stop();
        chunks.length = 0;
        // What was read is dropped: its bytes are free now, not when the refusal is answered.
        this.release(req);
        reject(err);
      };
      req.on('data', onData);
      req.on('end', onEnd);
      req.on('error', onCut);
      req.on('close', onCut);
    });
  }

  private overloaded(bound: 'all' | 'address'): TekilError {
    return new TekilError(
      'OVERLOADED',
      bound === 'all'
        ? `more than receiver.in_flight_max_bytes (${this.options.maxBytes} bytes) of webhook bodies are being received or waiting for their commit; retry shortly`
        : `more than receiver.in_flight_max_bytes_per_address (${this.options.maxBytesPerAddress} bytes) of webhook bodies from this address are being received or waiting for their commit; retry shortly`,
    );
  }

  private tooSlow(): TekilError {
    return new TekilError(
      'REQUEST_TIMEOUT',
      `the body arrived slower than receiver.body_min_rate (${this.options.minRate} bytes a second over ${this.options.rateWindowMs} ms)`,
    );
  }
}

function tooLarge(limit: number): TekilError {
  return new TekilError('BODY_TOO_LARGE', `body exceeds the limit of ${limit} bytes`);
}

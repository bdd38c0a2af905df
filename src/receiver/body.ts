import type { IncomingMessage, ServerResponse } from 'node:http';
import { TekilError } from '../errors.js';

/**
 * The body bytes this process holds for webhooks being received or waiting for their commit, and
 * their bound (`receiver.in_flight_max_bytes`). Without it the bound is `server.max_connections` x
 * `server.body_limit` (500 MiB at the defaults), reached by anyone who can open connections: bodies
 * are read before their signature can be checked.
 *
 * A body's bytes are taken when its Content-Length is known (or chunk by chunk when it is not) and
 * given back when its answer is sent or its connection closes. One body alone is always let in, so
 * a bound below `server.body_limit` cannot refuse a delivery for ever.
 */
export class BodiesInFlight {
  private held = 0;
  private readonly taken = new WeakMap<IncomingMessage, number>();
  private readonly answered = new WeakSet<IncomingMessage>();

  constructor(readonly maxBytes: number) {}

  get bytes(): number {
    return this.held;
  }

  /** Gives the request's bytes back once its answer is sent or its connection is gone. */
  track(req: IncomingMessage, res: ServerResponse): void {
    const release = () => this.release(req);
    res.once('finish', release);
    res.once('close', release);
  }

  private take(req: IncomingMessage, bytes: number): boolean {
    if (this.answered.has(req)) return false;
    if (this.held > 0 && this.held + bytes > this.maxBytes) return false;
    this.held += bytes;
    this.taken.set(req, (this.taken.get(req) ?? 0) + bytes);
    return true;
  }

  private release(req: IncomingMessage): void {
    this.answered.add(req);
    this.held -= this.taken.get(req) ?? 0;
    this.taken.delete(req);
  }

  /**
   * Reads a webhook's body as raw bytes, within `limit` and this bound. Over the limit:
   * BODY_TOO_LARGE; over the bound: OVERLOADED (503; the caller's error path reads the rest of the
   * body and drops it before it answers, see discardRest).
   */
  read(req: IncomingMessage, limit: number): Promise<Buffer> {
    const length = req.headers['content-length'];
    const declared = length === undefined ? undefined : Number(length);
    if (declared !== undefined && declared > limit) return Promise.reject(tooLarge(limit));
    if (declared !== undefined && !this.take(req, declared)) return Promise.reject(this.overloaded());
    return new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      let received = 0;
      const onData = (chunk: Buffer) => {
        received += chunk.length;
        if (received > limit) fail(tooLarge(limit));
        else if (declared === undefined && !this.take(req, chunk.length)) fail(this.overloaded());
        else chunks.push(chunk);
      };
      const onEnd = () => {
        stop();
        resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received));
      };
      const onCut = () => fail(new TekilError('REQUEST_MALFORMED', 'the connection closed before the body was complete'));
      const stop = () => {
        req.off('data', onData);
        req.off('end', onEnd);
        req.off('error', onCut);
        req.off('close', onCut);
      };
      function fail(err: TekilError): void {
        stop();
        chunks.length = 0;
        reject(err);
      }
      req.on('data', onData);
      req.on('end', onEnd);
      req.on('error', onCut);
      req.on('close', onCut);
    });
  }

  private overloaded(): TekilError {
    return new TekilError(
      'OVERLOADED',
      `more than receiver.in_flight_max_bytes (${this.maxBytes} bytes) of webhook bodies are being received or waiting for their commit; retry shortly`,
    );
  }
}

function tooLarge(limit: number): TekilError {
  return new TekilError('BODY_TOO_LARGE', `body exceeds the limit of ${limit} bytes`);
}

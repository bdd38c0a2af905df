import type { IncomingMessage } from 'node:http';

/** How long a refused body is read and dropped, at most, before its connection is closed anyway. */
export const DISCARD_MAX_MS = 5_000;

/**
 * Reads the rest of a request's body and drops it, up to `maxBytes` more or `maxMs`, and resolves
 * once it is all in (true) or a bound is reached (false). The body is not kept.
 *
 * Why: a refusal sent before the body is read (413, a 503) closes the connection. Closing a socket
 * while the client is still sending makes the kernel reset it, and clients that are still writing
 * (Node's fetch and http.request among them) then report EPIPE or ECONNRESET instead of the answer,
 * and retry as if the network had failed. Reading the rest first lets every ordinary client read the
 * answer; the bounds keep a client that sends without end from holding the connection.
 */
export function discardRest(req: IncomingMessage, maxBytes: number, maxMs: number = DISCARD_MAX_MS): Promise<boolean> {
  if (req.complete || req.destroyed) return Promise.resolve(req.complete);
  return new Promise<boolean>((resolve) => {
    let read = 0;
    const onData = (chunk: Buffer) => {
      read += chunk.length;
      if (read > maxBytes) finish(false);
    };
    const onEnd = () => finish(true);
    const onGone = () => finish(false);
    const timer = setTimeout(onGone, maxMs);
    function finish(all: boolean): void {
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onGone);
      req.off('error', onGone);
      resolve(all);
    }
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('close', onGone);
    req.once('error', onGone);
    req.resume();
  });
}

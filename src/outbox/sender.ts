import { HttpPoster } from '../http/post.js';
import { outcomeOf, type AttemptOutcome } from './attempt-decision.js';
import type { DestinationGuard } from '../http/destination-guard.js';

export type { AttemptOutcome };

export interface SendRequest {
  url: string;
  body: Buffer;
  /** The signature headers; the sender adds content-type and user-agent to this object. */
  headers: Record<string, string>;
  /** The endpoint's timeout: a deadline for the whole attempt, up to the answer's last byte. */
  timeoutMs: number;
}

/** Bytes of the answer kept in the history. */
export const RESPONSE_KEEP_BYTES = 4096;

/**
 * Posts a signed message to an endpoint and reports the outcome; never throws. Every connection goes
 * through the sending guard (private networks refused unless `sending.allow_networks` lists them).
 */
export class Sender {
  private readonly poster: HttpPoster;

  /** `proxy`: `sending.proxy`, every request tunnelled through it. */
  constructor(guard: DestinationGuard, proxy?: string) {
    this.poster = new HttpPoster({ guard, ...(proxy ? { proxy } : {}) });
  }

  async send(req: SendRequest): Promise<AttemptOutcome> {
    const headers = req.headers;
    headers['content-type'] = 'application/json';
    headers['user-agent'] = 'tekil';
    return outcomeOf(await this.poster.post({ url: req.url, headers, body: req.body, timeoutMs: req.timeoutMs, keepBytes: RESPONSE_KEEP_BYTES }));
  }

  /** Closes idle connections; with `abort`, also cuts requests still in flight. */
  close(abort = false): Promise<void> {
    return this.poster.close(abort);
  }
}

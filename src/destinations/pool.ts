import type { DestinationGuard } from '../http/destination-guard.js';
import { allowedAddress, parseBrokerUrl, type BrokerDestination } from './broker-url.js';
import { NatsPublisher } from './nats.js';
import type { BrokerAnswer, BrokerMessage, BrokerPublisher } from './publisher.js';
import { RabbitPublisher } from './rabbitmq.js';
import { RedisPublisher } from './redis.js';

/** Longest wait for the brokers' answers to closing (a stop must not hang on an unreachable one). */
const CLOSE_WAIT_MS = 5_000;

/** A publish's outcome: the broker's answer, when it started and how long it took; `unusable`: the URL cannot be read, retrying cannot help. */
export type BrokerPublishResult = BrokerAnswer & { startedAt: Date; durationMs: number; unusable?: boolean };

/** Error text the history may keep: the client's message, never the URL (it may carry a password). */
function describe(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.replace(/\b([a-z]+:\/\/)[^@\s/]*@/gi, '$1***@') || 'unknown error';
}

/**
 * Open connections to broker destinations, one per destination URL and guard, shared by every publish
 * to it. A connection that fails is dropped, and the next publish opens a new one (the delivery's next
 * attempt, on its ladder). A publish that gets no answer within its timeout fails and drops the
 * connection too, since it may be stuck. `close()` closes them all (the dispatcher's, the worker's stop).
 */
export class BrokerPool {
  private readonly open = new Map<string, Promise<BrokerPublisher>>();
  private closing = false;

  async publish(url: string, guard: DestinationGuard, message: BrokerMessage, timeoutMs: number): Promise<BrokerPublishResult> {
    const startedAt = new Date();
    const t0 = performance.now();
    const done = (answer: BrokerAnswer, unusable = false): BrokerPublishResult => ({
      ...answer,
      startedAt,
      durationMs: Math.round(performance.now() - t0),
      ...(unusable ? { unusable } : {}),
    });
    let destination: BrokerDestination;
    try {
      destination = parseBrokerUrl(url);
    } catch (err) {
      return done({ ok: false, error: describe(err) }, true);
    }
    const key = `${this.guardId(guard)}\n${url}`;
    let timer: NodeJS.Timeout | undefined;
    let timedOut = false;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        timedOut = true;
        reject(new Error(`no answer from the broker within ${timeoutMs} ms`));
      }, timeoutMs);
    });
    let publisher: Promise<BrokerPublisher> | undefined;
    try {
      publisher = this.connection(key, destination, guard, timeoutMs);
      const answer = await Promise.race([publisher.then((p) => p.publish(message)), deadline]);
      return done(answer);
    } catch (err) {
      // A connection that failed, or may be stuck, is replaced; one that only refused this message is kept.
      if (publisher) await this.dropIfBroken(key, publisher, timedOut);
      return done({ ok: false, error: `${destination.kind}: ${describe(err)}` });
    } finally {
      clearTimeout(timer);
    }
  }

  private connection(key: string, destination: BrokerDestination, guard: DestinationGuard, timeoutMs: number): Promise<BrokerPublisher> {
    if (this.closing) return Promise.reject(new Error('stopping'));
    const existing = this.open.get(key);
    if (existing) return existing.then((p) => (p.closed ? this.reopen(key, existing, destination, guard, timeoutMs) : p));
    const opening = this.dial(destination, guard, timeoutMs);
    this.open.set(key, opening);
    opening.catch(() => this.drop(key, opening));
    return opening;
  }

  private reopen(
    key: string,
    stale: Promise<BrokerPublisher>,
    destination: BrokerDestination,
    guard: DestinationGuard,
    timeoutMs: number,
  ): Promise<BrokerPublisher> {
    this.drop(key, stale);
    return this.connection(key, destination, guard, timeoutMs);
  }

  private async dial(destination: BrokerDestination, guard: DestinationGuard, timeoutMs: number): Promise<BrokerPublisher> {
    const address = await allowedAddress(guard, destination.host);
    switch (destination.kind) {
      case 'rabbitmq':
        return RabbitPublisher.open(destination, address, timeoutMs);
      case 'nats':
        return NatsPublisher.open(destination, address, timeoutMs);
      case 'redis':
        return RedisPublisher.open(destination, address, timeoutMs);
    }
  }

  private async dropIfBroken(key: string, publisher: Promise<BrokerPublisher>, timedOut: boolean): Promise<void> {
    const open = await publisher.then(
      (p) => !p.closed,
      () => false,
    );
    if (timedOut || !open) this.drop(key, publisher);
  }

  private readonly guardIds = new WeakMap<DestinationGuard, number>();
  private guards = 0;
  /** Connections are per guard too: the same URL judged by another guard is another connection. */
  private guardId(guard: DestinationGuard): number {
    let id = this.guardIds.get(guard);
    if (id === undefined) {
      id = ++this.guards;
      this.guardIds.set(guard, id);
    }
    return id;
  }

  /** Forgets a connection (if it is still the one pooled) and closes it. */
  private drop(key: string, publisher: Promise<BrokerPublisher>): void {
    if (this.open.get(key) === publisher) this.open.delete(key);
    void publisher.then(
      (p) => p.close(),
      () => {},
    );
  }

  /** Open connections now (tests and metrics). */
  get size(): number {
    return this.open.size;
  }

  /** Closes every connection; a broker that does not answer its close within CLOSE_WAIT_MS is left behind. */
  async close(): Promise<void> {
    this.closing = true;
    const all = [...this.open.values()];
    this.open.clear();
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, CLOSE_WAIT_MS);
      timer.unref();
    });
    await Promise.race([Promise.all(all.map((p) => p.then((c) => c.close()).catch(() => {}))), waited]);
    clearTimeout(timer);
  }
}

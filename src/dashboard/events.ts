import type { Db } from '../store/db.js';
import type { Logger } from '../logger.js';
import { INBOX_CHANNEL } from '../store/sql/inbox/notify.js';
import { deliveryChangesSince, type DeliveryChange } from '../store/sql/dashboard/events.js';
import { WakeLoop } from '../store/wake-loop.js';

export interface EventHubOptions {
  /** How often to look without a notification: state changes made by workers send none. */
  pollIntervalMs: number;
  /** How far back a delivery's receipt may be for its changes to be streamed. */
  lookbackMs: number;
}

export const defaultEventHubOptions: EventHubOptions = { pollIntervalMs: 1000, lookbackMs: 3_600_000 };

/**
 * Rows are stamped with their transaction's start time but become visible at commit: a row may
 * appear up to this long after its stamp. Each poll looks back this far and drops what it has sent.
 */
const OVERLAP_MS = 10_000;
const BATCH = 500;

export type Listener = (change: DeliveryChange) => void;

/**
 * One watcher of the inbox per process, shared by every open event stream: it wakes on the inbox's
 * NOTIFY (new deliveries, replays) and polls on an interval as the fallback (and for state changes,
 * which notify nothing). It runs only while someone listens.
 */
export class EventHub {
  private readonly listeners = new Set<Listener>();
  private readonly sent = new Map<string, number>();
  private watermark = new Date();
  /** One poll at a time; a wake-up during a poll runs one more after it. */
  private readonly polls: WakeLoop;

  constructor(
    private readonly db: Db,
    logger: Logger,
    private readonly options: EventHubOptions = defaultEventHubOptions,
  ) {
    this.polls = new WakeLoop(db, {
      channel: INBOX_CHANNEL,
      pollIntervalMs: options.pollIntervalMs,
      run: () => this.pollOnce(),
      onError: (err) => {
        logger.warn({ err }, 'event stream: poll failed');
        return options.pollIntervalMs;
      },
      // The interval still runs meanwhile: the stream is only slower.
      onListenFailed: (err, retryInMs) => logger.warn({ err, retryInMs }, 'event stream: LISTEN failed, polling until it is set up'),
    });
  }

  async subscribe(listener: Listener): Promise<() => void> {
    this.listeners.add(listener);
    if (this.listeners.size === 1) await this.begin();
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) void this.end();
    };
  }

  async close(): Promise<void> {
    this.listeners.clear();
    await this.end();
  }

  private async begin(): Promise<void> {
    this.watermark = new Date(Date.now() - OVERLAP_MS);
    await this.polls.start();
  }

  private async end(): Promise<void> {
    await this.polls.stop();
    this.sent.clear();
  }

  /** Answers whether more changes are waiting (a full batch that moved on). */
  private async pollOnce(): Promise<boolean> {
    const since = new Date(this.watermark.getTime() - OVERLAP_MS);
    const changes = await deliveryChangesSince(this.db, since, this.options.lookbackMs, BATCH);
    const now = Date.now();
    const before = this.watermark.getTime();
    for (const change of changes) {
      const key = `${change.source}\u0000${change.event_id}\u0000${change.status}\u0000${change.attempts}`;
      if (this.sent.has(key)) continue;
      this.sent.set(key, change.changed_at.getTime());
      if (change.changed_at > this.watermark) this.watermark = change.changed_at;
      for (const listener of this.listeners) listener(change);
    }
    // Forget what is older than any poll can see again.
    for (const [key, at] of this.sent) if (at < this.watermark.getTime() - 2 * OVERLAP_MS) this.sent.delete(key);
    if (changes.length === 0 && now - this.watermark.getTime() > 2 * OVERLAP_MS) this.watermark = new Date(now - OVERLAP_MS);
    // A full batch means more are waiting (unless it did not move on: then the next interval tries).
    return changes.length === BATCH && this.watermark.getTime() > before;
  }
}

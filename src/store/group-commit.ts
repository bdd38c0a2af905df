import { TekilError } from '../errors.js';

export interface GroupCommitOptions {
  /** Most items one flush carries. */
  maxItems: number;
  /** Most bytes one flush carries (a single larger item still goes alone). */
  maxBytes: number;
  /** Items that may wait; beyond this, enqueue fails with OVERLOADED. */
  queueMaxItems: number;
  /** Bytes that may wait; beyond this, enqueue fails with OVERLOADED (one item is always let in). */
  queueMaxBytes?: number | undefined;
  /** Flushes allowed in flight at once. One keeps the store busy while the next batch gathers. */
  maxInFlight?: number | undefined;
  /**
   * Waits for the end of the event loop's turn before a flush, so every request read in that turn goes
   * in one flush. For the embedded store: each statement has a fixed cost on PGlite's one thread, and
   * a flush started at once would carry the turn's first request alone while the rest of the burst the
   * event loop had already read waited for the next one.
   */
  gatherTurn?: boolean | undefined;
  /**
   * With gatherTurn: once this many items wait and a flush slot is free, the flush goes at once instead
   * of at the turn's end, so the store starts on them while the event loop still reads (and, for the
   * receiver, verifies) the rest of the turn's requests; those go in the next flush. Unset: every flush
   * waits for the turn's end.
   */
  earlyFlushItems?: number | undefined;
  /** What the items are, plural, for the OVERLOADED message ("deliveries", "messages"). */
  noun: string;
}

/** One waiting item as the queue sees it: its size, and how to fail it if the flush itself breaks. */
export interface Queued {
  readonly bytes: number;
  reject(err: TekilError): void;
}

/**
 * Writes one batch; resolves (never rejects) to a function that answers the batch's callers. The answer
 * is separate so the next flush can start before the answers are written (see pump).
 */
export type FlushBatch<T extends Queued> = (batch: T[]) => Promise<() => void>;

/**
 * The group-commit queue shared by the receiver's inbox inserts and the API's publishing. When no flush
 * is in flight an item is written at once (alone); while one is in flight, arrivals gather and go
 * together in the next flush, capped by items and bytes. So an idle store answers at single-item latency
 * and a busy one commits many items per round trip. What a flush writes, and how it answers, is the
 * owner's `flush`.
 */
export class GroupCommitQueue<T extends Queued> {
  private queue: T[] = [];
  private queuedBytes = 0;
  private inFlight = 0;
  private stopping = false;
  private drained: Array<() => void> = [];
  private readonly maxInFlight: number;
  private pumpScheduled = false;
  /** When the last flush started (performance.now()): a worker sharing the embedded store gives way while this is recent. */
  lastFlushAt = -Infinity;
  /** Since when a flush has been in flight without a break (performance.now()), while one is. */
  private busySince = 0;
  /** Milliseconds of the busy periods that have ended. */
  private busyBefore = 0;

  constructor(
    private readonly options: GroupCommitOptions,
    private readonly flush: FlushBatch<T>,
  ) {
    this.maxInFlight = options.maxInFlight ?? 1;
  }

  /** Items waiting for a flush (not counting the ones in flight). */
  get queued(): number {
    return this.queue.length;
  }

  /**
   * Milliseconds during which at least one flush was in flight, since the queue was made: a reader
   * takes two readings to learn what share of a period the store spent on this queue's writes.
   */
  get busyMs(): number {
    return this.busyBefore + (this.inFlight > 0 ? performance.now() - this.busySince : 0);
  }

  start(): void {
    this.stopping = false;
  }

  /** Refuses new items, then resolves once every queued one has been written or failed. */
  stop(): Promise<void> {
    this.stopping = true;
    if (this.queue.length === 0 && this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.drained.push(resolve));
  }

  /** Queues an item, or throws SHUTTING_DOWN / OVERLOADED; the owner's flush answers it later. */
  add(item: T): void {
    if (this.stopping) throw new TekilError('SHUTTING_DOWN', 'tekil is shutting down; retry shortly');
    const { queueMaxItems, queueMaxBytes, noun } = this.options;
    if (this.queue.length >= queueMaxItems) {
      throw new TekilError('OVERLOADED', `more than ${queueMaxItems} ${noun} are waiting to be written; retry shortly`);
    }
    if (queueMaxBytes !== undefined && this.queue.length > 0 && this.queuedBytes + item.bytes > queueMaxBytes) {
      throw new TekilError('OVERLOADED', `more than ${queueMaxBytes} body bytes are waiting to be written; retry shortly`);
    }
    this.queue.push(item);
    this.queuedBytes += item.bytes;
    this.schedulePump();
  }

  private schedulePump(): void {
    if (!this.options.gatherTurn) return this.pump();
    const early = this.options.earlyFlushItems;
    if (early !== undefined && this.queue.length >= early && this.inFlight < this.maxInFlight) return this.pump();
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < this.maxInFlight && this.queue.length > 0) {
      const batch = this.take();
      this.lastFlushAt = performance.now();
      if (this.inFlight++ === 0) this.busySince = this.lastFlushAt;
      void this.flush(batch)
        .catch((err: unknown) => () => {
          // flush() handles store errors itself; this is a bug guard so no request waits forever.
          for (const p of batch) p.reject(new TekilError('INTERNAL', 'the batch could not be written', { cause: err }));
        })
        .then((answer) => {
          if (--this.inFlight === 0) this.busyBefore += performance.now() - this.busySince;
          // The next flush goes out before this batch's requests are answered: writing dozens of
          // responses takes a while, and the store should not sit idle meanwhile. (On the embedded
          // store it waits for the turn's end like any flush.)
          this.schedulePump();
          answer();
          if (this.inFlight === 0 && this.queue.length === 0 && this.drained.length > 0) {
            for (const resolve of this.drained.splice(0)) resolve();
          }
        });
    }
  }

  /** Takes the next batch off the queue, within the item and byte caps (at least one item). */
  private take(): T[] {
    const { maxItems, maxBytes } = this.options;
    if (this.queue.length <= maxItems && this.queuedBytes <= maxBytes) {
      const all = this.queue;
      this.queue = [];
      this.queuedBytes = 0;
      return all;
    }
    let n = 0;
    let bytes = 0;
    while (n < this.queue.length && n < maxItems) {
      const size = this.queue[n]!.bytes;
      if (n > 0 && bytes + size > maxBytes) break;
      bytes += size;
      n++;
    }
    this.queuedBytes -= bytes;
    return this.queue.splice(0, n);
  }
}

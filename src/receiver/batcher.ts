import type { Logger } from '../logger.js';
import type { Context, Service } from '../service.js';
import type { Db } from '../store/db.js';
import { TekilError } from '../errors.js';
import { isStoreUnavailable } from '../store/pg-error.js';
import { deliveryKey, insertDeliveries, insertDelivery, type InboxDeliveryRow } from '../store/sql/inbox/insert-deliveries.js';
import { receiverMetrics, type DeliveryOutcome, type ReceiverMetrics } from './metrics.js';

export interface BatcherOptions {
  /** Most rows one INSERT carries. */
  maxRows: number;
  /** Most body bytes one INSERT carries (a single larger row still goes alone). */
  maxBytes: number;
  /** Rows that may wait; beyond this, enqueue fails with OVERLOADED. */
  queueMaxRows: number;
  /** Body bytes that may wait; beyond this, enqueue fails with OVERLOADED (one row is always let in). */
  queueMaxBytes?: number;
  /** INSERTs allowed in flight at once. One keeps the store busy while the next batch gathers. */
  maxInFlight?: number;
  /**
   * Waits for the end of the event loop's turn before a flush, so every request read in that turn goes
   * in one INSERT. For the embedded store: PGlite runs each statement synchronously on this thread, so a
   * flush started at once would run (and answer) before the turn's other requests were even read, and
   * every INSERT would carry one row.
   */
  gatherTurn?: boolean;
  metrics?: ReceiverMetrics;
  logger?: Logger;
}

interface Pending {
  row: InboxDeliveryRow;
  resolve(outcome: DeliveryOutcome): void;
  reject(err: TekilError): void;
}

/**
 * The group-commit batcher. Each delivery waits here until it is committed. When no INSERT is in
 * flight a delivery is written at once (alone); while one is in flight, arrivals gather and go
 * together in the next INSERT, capped by rows and bytes. So an idle store answers at single-row
 * latency and a busy one commits many rows per round trip. A failed batch falls back to per-row
 * inserts so one bad row cannot fail its neighbours; an unreachable store fails the whole batch
 * with STORE_UNAVAILABLE at once.
 */
export class InboxBatcher implements Service {
  readonly name = 'inbox-batcher';
  private queue: Pending[] = [];
  private queuedBytes = 0;
  private inFlight = 0;
  private stopping = false;
  private drained: Array<() => void> = [];
  private readonly maxInFlight: number;
  private pumpScheduled = false;
  /** When the last INSERT started (performance.now()): a worker sharing the embedded store gives way while this is recent. */
  lastFlushAt = -Infinity;

  constructor(
    private readonly db: Db,
    private readonly options: BatcherOptions,
  ) {
    this.maxInFlight = options.maxInFlight ?? 1;
  }

  /** Rows waiting for a flush (not counting the ones in flight). */
  get queued(): number {
    return this.queue.length;
  }

  async start(): Promise<void> {
    this.stopping = false;
  }

  /** Refuses new deliveries, then resolves once every queued one has been written or failed. */
  stop(): Promise<void> {
    this.stopping = true;
    if (this.queue.length === 0 && this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.drained.push(resolve));
  }

  /** Resolves once the row is committed (accepted) or found already recorded (duplicate). */
  enqueue(row: InboxDeliveryRow): Promise<DeliveryOutcome> {
    if (this.stopping) return Promise.reject(new TekilError('SHUTTING_DOWN', 'tekil is shutting down; retry shortly'));
    if (this.queue.length >= this.options.queueMaxRows) {
      return Promise.reject(new TekilError('OVERLOADED', `more than ${this.options.queueMaxRows} deliveries are waiting to be written; retry shortly`));
    }
    const maxBytes = this.options.queueMaxBytes;
    if (maxBytes !== undefined && this.queue.length > 0 && this.queuedBytes + row.body.length > maxBytes) {
      return Promise.reject(new TekilError('OVERLOADED', `more than ${maxBytes} body bytes are waiting to be written; retry shortly`));
    }
    return new Promise<DeliveryOutcome>((resolve, reject) => {
      this.queue.push({ row, resolve, reject });
      this.queuedBytes += row.body.length;
      this.schedulePump();
    });
  }

  private schedulePump(): void {
    if (!this.options.gatherTurn) return this.pump();
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
      this.inFlight++;
      void this.flush(batch)
        .catch((err: unknown) => () => {
          // flush() handles store errors itself; this is a bug guard so no request waits forever.
          for (const p of batch) p.reject(new TekilError('INTERNAL', 'the delivery could not be written', { cause: err }));
        })
        .then((answer) => {
          this.inFlight--;
          // The next INSERT goes out before this batch's requests are answered: writing dozens of
          // responses takes a while, and the store should not sit idle meanwhile. (On the embedded
          // store it waits for the turn's end like any flush: the store runs on this thread anyway.)
          this.schedulePump();
          answer();
          if (this.inFlight === 0 && this.queue.length === 0 && this.drained.length > 0) {
            for (const resolve of this.drained.splice(0)) resolve();
          }
        });
    }
  }

  /** Takes the next batch off the queue, within the row and byte caps (at least one row). */
  private take(): Pending[] {
    const { maxRows, maxBytes } = this.options;
    if (this.queue.length <= maxRows && this.queuedBytes <= maxBytes) {
      const all = this.queue;
      this.queue = [];
      this.queuedBytes = 0;
      return all;
    }
    let n = 0;
    let bytes = 0;
    while (n < this.queue.length && n < maxRows) {
      const size = this.queue[n]!.row.body.length;
      if (n > 0 && bytes + size > maxBytes) break;
      bytes += size;
      n++;
    }
    this.queuedBytes -= bytes;
    return this.queue.splice(0, n);
  }

  /** Writes one batch; resolves (never rejects) to a function that answers its requests. */
  private async flush(batch: Pending[]): Promise<() => void> {
    this.lastFlushAt = performance.now();
    this.options.metrics?.batchRows.observe(batch.length);
    // Copies of one delivery inside a batch: the first is the one written, the rest are duplicates.
    const leaders: Pending[] = [];
    const followers = new Map<string, Pending[]>();
    const seen = new Set<string>();
    for (const p of batch) {
      const key = deliveryKey(p.row.source, p.row.eventId);
      if (!seen.has(key)) {
        seen.add(key);
        leaders.push(p);
      } else {
        const list = followers.get(key);
        if (list) list.push(p);
        else followers.set(key, [p]);
      }
    }
    const settle = (p: Pending, outcome: DeliveryOutcome | TekilError) => {
      const copies = followers.size > 0 ? followers.get(deliveryKey(p.row.source, p.row.eventId)) : undefined;
      if (outcome instanceof TekilError) {
        p.reject(outcome);
        if (copies) for (const c of copies) c.reject(outcome);
      } else {
        p.resolve(outcome);
        if (copies) for (const c of copies) c.resolve('duplicate');
      }
    };

    let inserted: Set<string>;
    try {
      inserted = await insertDeliveries(this.db, leaders.map((p) => p.row));
    } catch (err) {
      this.options.metrics?.flushErrors.inc();
      if (isStoreUnavailable(err) || leaders.length === 1) {
        const failure = this.failure(err);
        this.options.logger?.warn({ code: failure.code, rows: batch.length, err: { message: (err as Error).message } }, 'inbox batch insert failed');
        return () => {
          for (const p of leaders) settle(p, failure);
        };
      }
      this.options.logger?.warn({ rows: batch.length, err: { message: (err as Error).message } }, 'inbox batch insert failed; writing its rows one by one');
      await this.fallback(leaders, settle);
      return () => {};
    }
    return () => {
      for (const p of leaders) settle(p, inserted.has(deliveryKey(p.row.source, p.row.eventId)) ? 'accepted' : 'duplicate');
    };
  }

  /** Per-row inserts after a batch failed for a reason other than the store being unreachable. */
  private async fallback(leaders: Pending[], settle: (p: Pending, outcome: DeliveryOutcome | TekilError) => void): Promise<void> {
    for (let i = 0; i < leaders.length; i++) {
      const p = leaders[i]!;
      try {
        settle(p, (await insertDelivery(this.db, p.row)) ? 'accepted' : 'duplicate');
      } catch (err) {
        const failure = this.failure(err);
        if (failure.code === 'STORE_UNAVAILABLE') {
          // The store went away mid-fallback: fail the rest now instead of one timeout each.
          for (let j = i; j < leaders.length; j++) settle(leaders[j]!, failure);
          return;
        }
        this.options.logger?.warn({ source: p.row.source, eventId: p.row.eventId, err: { message: (err as Error).message } }, 'the store refused a delivery');
        settle(p, failure);
      }
    }
  }

  private failure(err: unknown): TekilError {
    if (isStoreUnavailable(err)) return new TekilError('STORE_UNAVAILABLE', 'the store cannot commit right now; retry shortly', { cause: err });
    return new TekilError('STORE_REJECTED', 'the store refused this delivery', { cause: err });
  }
}

/** The batcher configured from `receiver:` settings, with the process's metrics and logger. */
export function createInboxBatcher(ctx: Context, overrides: { maxInFlight?: number } = {}): InboxBatcher {
  const r = ctx.config.receiver;
  return new InboxBatcher(ctx.db, {
    maxRows: r.batch_max_rows,
    maxBytes: r.batch_max_bytes,
    queueMaxRows: r.queue_max_rows,
    queueMaxBytes: r.queue_max_bytes,
    maxInFlight: overrides.maxInFlight ?? r.max_in_flight,
    gatherTurn: ctx.db.kind === 'pglite',
    metrics: receiverMetrics(ctx.metrics),
    logger: ctx.logger.child({ service: 'inbox-batcher' }),
  });
}

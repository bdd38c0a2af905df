import type { Logger } from '../logger.js';
import type { Context, Service } from '../service.js';
import type { TekilConfig } from '../config/schema.js';
import type { Db, StoreKind } from '../store/db.js';
import { TekilError } from '../errors.js';
import { GroupCommitQueue } from '../store/group-commit.js';
import { isStoreUnavailable } from '../pg-error.js';
import {
  deliveryKey,
  insertDeliveries,
  insertDeliveryAnswer,
  type InboxDeliveryRow,
  type InsertedDeliveries,
  type PreviousOutcome,
} from '../store/sql/inbox/insert-deliveries.js';
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
   * in one INSERT. For the embedded store: each statement has a fixed cost on PGlite's one thread, and
   * a flush started at once would carry the turn's first request alone while the rest of the burst the
   * event loop had already read waited for the next one.
   */
  gatherTurn?: boolean;
  /** With gatherTurn, rows that go at once when a slot is free (GroupCommitOptions.earlyFlushItems). */
  earlyFlushRows?: number;
  metrics?: ReceiverMetrics;
  logger?: Logger;
}

/**
 * A delivery's receipt: new (`accepted`) or a copy of one recorded before (`duplicate`), then with what
 * the first copy's processing came to where the insert saw it (docs/receiving.md, "A duplicate's answer").
 */
export interface Receipt {
  outcome: DeliveryOutcome;
  previous?: PreviousOutcome;
}

/** The first copy was written by this very batch: it waits for a worker. */
const JUST_RECORDED: PreviousOutcome = Object.freeze({ status: 'pending', result_ref: null });

interface Pending {
  row: InboxDeliveryRow;
  bytes: number;
  resolve(receipt: Receipt): void;
  reject(err: TekilError): void;
}

/** What the receiver's route needs of the batcher: a delivery in, its outcome out once it is committed. */
export type InboxWriter = Pick<InboxBatcher, 'receive'>;

/**
 * The receiver's group commit (src/store/group-commit.ts): each delivery waits until it is committed,
 * many to one INSERT while the store is busy. A failed batch falls back to per-row inserts so one bad
 * row cannot fail its neighbours; an unreachable store fails the whole batch with STORE_UNAVAILABLE at
 * once.
 */
export class InboxBatcher implements Service {
  readonly name = 'inbox-batcher';
  private readonly queue: GroupCommitQueue<Pending>;

  constructor(
    private readonly db: Db,
    private readonly options: BatcherOptions,
  ) {
    this.queue = new GroupCommitQueue<Pending>(
      {
        maxItems: options.maxRows,
        maxBytes: options.maxBytes,
        queueMaxItems: options.queueMaxRows,
        queueMaxBytes: options.queueMaxBytes,
        maxInFlight: options.maxInFlight,
        gatherTurn: options.gatherTurn,
        earlyFlushItems: options.earlyFlushRows,
        noun: 'deliveries',
      },
      (batch) => this.flush(batch),
    );
  }

  /** When the last INSERT started (performance.now()): a worker sharing the embedded store gives way while this is recent. */
  get lastFlushAt(): number {
    return this.queue.lastFlushAt;
  }

  /** Milliseconds with an INSERT in flight since the batcher was made (two readings give a share of a period). */
  get busyMs(): number {
    return this.queue.busyMs;
  }

  /** Rows waiting for a flush (not counting the ones in flight). */
  get queued(): number {
    return this.queue.queued;
  }

  async start(): Promise<void> {
    this.queue.start();
  }

  /** Refuses new deliveries, then resolves once every queued one has been written or failed. */
  stop(): Promise<void> {
    return this.queue.stop();
  }

  /** Resolves once the row is committed (accepted) or found already recorded (duplicate). */
  async enqueue(row: InboxDeliveryRow): Promise<DeliveryOutcome> {
    return (await this.receive(row)).outcome;
  }

  /** As enqueue, with a duplicate's previous outcome: what the receiver answers. */
  receive(row: InboxDeliveryRow): Promise<Receipt> {
    return new Promise<Receipt>((resolve, reject) => this.queue.add({ row, bytes: row.body.length, resolve, reject }));
  }

  /** Writes one batch; resolves (never rejects) to a function that answers its requests. */
  private async flush(batch: Pending[]): Promise<() => void> {
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
    const settle = (p: Pending, outcome: InsertedDeliveries | TekilError) => {
      const key = deliveryKey(p.row.source, p.row.eventId);
      const copies = followers.size > 0 ? followers.get(key) : undefined;
      if (outcome instanceof TekilError) {
        p.reject(outcome);
        if (copies) for (const c of copies) c.reject(outcome);
        return;
      }
      const accepted = outcome.inserted.has(key);
      const previous = accepted ? undefined : outcome.previous.get(key);
      p.resolve(accepted ? { outcome: 'accepted' } : previous ? { outcome: 'duplicate', previous } : { outcome: 'duplicate' });
      if (copies) {
        const copyPrevious = accepted ? JUST_RECORDED : previous;
        for (const c of copies) c.resolve(copyPrevious ? { outcome: 'duplicate', previous: copyPrevious } : { outcome: 'duplicate' });
      }
    };

    let inserted: InsertedDeliveries;
    try {
      inserted = await insertDeliveries(
        this.db,
        leaders.map((p) => p.row),
      );
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
      for (const p of leaders) settle(p, inserted);
    };
  }

  /** Per-row inserts after a batch failed for a reason other than the store being unreachable. */
  private async fallback(leaders: Pending[], settle: (p: Pending, outcome: InsertedDeliveries | TekilError) => void): Promise<void> {
    for (let i = 0; i < leaders.length; i++) {
      const p = leaders[i]!;
      try {
        settle(p, await insertDeliveryAnswer(this.db, p.row));
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

/**
 * INSERTs in flight: the setting, or the store's default. On Postgres one keeps the server busy while
 * the next batch gathers (two measured more CPU per row on both sides for a lower rate). On the embedded
 * store two: PGlite runs on its own thread, and with one INSERT queued behind the running one it never
 * waits for the event loop to hand it the next batch (about a fifth more requests a second, with a
 * lower p99, in alternating runs of `BENCH_STORE=pglite npm run bench:ingest`).
 */
export function receiverInFlight(receiver: Pick<TekilConfig['receiver'], 'max_in_flight'>, store: StoreKind): number {
  return receiver.max_in_flight ?? (store === 'pglite' ? 2 : 1);
}

/**
 * On the embedded store, rows that are flushed as soon as a slot is free instead of at the end of the
 * event loop's turn. A burst of requests read in one turn is verified one after the other on the event
 * loop's thread; waiting for the turn's end kept PGlite's thread idle meanwhile. Sixteen keeps each
 * INSERT's fixed cost shared by enough rows (8 and 16 measured alike, 24 less; see docs/performance.md).
 */
export const EMBEDDED_EARLY_FLUSH_ROWS = 16;

/** The batcher configured from `receiver:` settings, with the process's metrics and logger. */
export function createInboxBatcher(ctx: Context, overrides: { maxInFlight?: number } = {}): InboxBatcher {
  const r = ctx.config.receiver;
  return new InboxBatcher(ctx.db, {
    maxRows: r.batch_max_rows,
    maxBytes: r.batch_max_bytes,
    queueMaxRows: r.queue_max_rows,
    queueMaxBytes: r.queue_max_bytes,
    maxInFlight: overrides.maxInFlight ?? receiverInFlight(r, ctx.db.kind),
    gatherTurn: ctx.db.kind === 'pglite',
    earlyFlushRows: ctx.db.kind === 'pglite' ? EMBEDDED_EARLY_FLUSH_ROWS : undefined,
    metrics: receiverMetrics(ctx.metrics),
    logger: ctx.logger.child({ service: 'inbox-batcher' }),
  });
}

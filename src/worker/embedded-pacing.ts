/**
 * How the worker shares the embedded store with the receiver. PGlite is one connection on one thread
 * (its own, beside the event loop's): while a worker batch holds it, the receiver's INSERT waits, and
 * the requests in it wait for their answers. Left alone, a batch chained straight after the insert that
 * woke it takes the connection before the receiver's next INSERT, so the receiver writes few rows per
 * INSERT and the worker claims few rows per batch — a fixed cost per delivery on both sides.
 *
 * So on the embedded store the worker
 * - lets the event loop turn before each claim (the receiver's waiting requests are read and batched),
 * - waits a little after a wake-up, so a stream of inserts is claimed in batches rather than one by one,
 * - claims at most EMBEDDED_CLAIM_LIMIT deliveries, so one batch holds the connection for tens of
 *   milliseconds, not hundreds (the receiver's answers wait for it),
 * - while the receiver is busy, rests three times as long as its last batch took: the receiver gets at
 *   least three quarters of the store, and the worker catches up once the burst is over.
 * Nothing here changes what a batch does: claims, leases and ordering are the same.
 */
export const EMBEDDED_CLAIM_LIMIT = 64;
/** After a wake-up, how long the worker lets deliveries gather before it claims. */
const GATHER_MS = 25;
/** The receiver counts as busy when it started a flush this recently. */
const BUSY_WINDOW_MS = 100;
/** While the receiver is busy, the worker rests this many times its last batch's duration. */
const REST_FACTOR = 3;

/** What the worker sees of the receiver: when it last started writing a batch (performance.now()). */
export interface IngestActivity {
  readonly lastFlushAt: number;
}

export interface Pacing {
  /** The most deliveries one claim takes. */
  readonly claimLimit: number;
  /** Awaited after a batch of `batchMs` that found `full` batch: resolves when the next may be claimed. */
  afterBatch(batchMs: number, full: boolean): Promise<void> | undefined;
  /** Awaited after a wake-up, before the claim. */
  afterWakeup(): Promise<void> | undefined;
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Postgres: no pacing (each loop has its own connection and the server works in its own processes). */
export function serverPacing(batchSize: number): Pacing {
  return { claimLimit: batchSize, afterBatch: () => undefined, afterWakeup: () => undefined };
}

export function embeddedPacing(batchSize: number, ingest: IngestActivity | undefined): Pacing {
  return {
    claimLimit: Math.min(batchSize, EMBEDDED_CLAIM_LIMIT),
    afterBatch(batchMs, full) {
      if (ingest && performance.now() - ingest.lastFlushAt < BUSY_WINDOW_MS) return sleep(Math.max(GATHER_MS, REST_FACTOR * batchMs));
      return full ? turn() : undefined;
    },
    afterWakeup: () => sleep(GATHER_MS),
  };
}

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
 * - while the receiver is busy, rests after each batch in proportion to the share of the store the
 *   receiver used during its previous rest: with a share u, the rest is u / (1 − u) times the batch,
 *   between MIN_REST_FACTOR and MAX_REST_FACTOR times. A burst that fills the store is acknowledged at
 *   nearly its full speed (the worker takes about a tenth) and processed once it is over; a moderate
 *   stream leaves the store idle between its INSERTs, and the worker uses that time to keep up with it.
 * Nothing here changes what a batch does: claims, leases and ordering are the same.
 */
export const EMBEDDED_CLAIM_LIMIT = 64;
/** After a wake-up, how long the worker lets deliveries gather before it claims. */
const GATHER_MS = 25;
/** The receiver counts as busy when it started a flush this recently. */
const BUSY_WINDOW_MS = 100;
/** The rest after the first batch of a busy period, in batch durations (nothing measured yet). */
export const FIRST_REST_FACTOR = 3;
/**
 * Bounds of the rest while the receiver is busy, in batch durations. The worker's share of the store's
 * time is 1 / (1 + factor): at most two thirds, so the receiver's INSERTs never wait behind batch after
 * batch, and at least an eleventh, so processing goes on during the longest burst.
 */
export const MIN_REST_FACTOR = 0.5;
export const MAX_REST_FACTOR = 10;

/** What the worker sees of the receiver. */
export interface IngestActivity {
  /** When it last started writing a batch (performance.now()). */
  readonly lastFlushAt: number;
  /** Milliseconds with an INSERT in flight, in all (a running total: two readings give a share). */
  readonly busyMs: number;
}

/** The rest factor that leaves the receiver a share `used` of the store: used / (1 − used), bounded. */
export function restFactorFor(used: number): number {
  if (!(used < 1)) return MAX_REST_FACTOR;
  return Math.min(MAX_REST_FACTOR, Math.max(MIN_REST_FACTOR, used / (1 - used)));
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
  let restFactor = FIRST_REST_FACTOR;
  /**
   * Rests restFactor × the batch, and sets the next factor from the receiver's share of the store during
   * this rest. The first part of the rest (up to one batch's duration) is not measured: the rows that
   * arrived while the worker held the store are written then, whatever the load.
   */
  async function rest(activity: IngestActivity, batchMs: number, full: boolean): Promise<void> {
    const total = restFactor * batchMs;
    const settle = Math.min(batchMs, total / 2);
    await sleep(settle);
    const busy0 = activity.busyMs;
    const t0 = performance.now();
    await sleep(total - settle);
    const elapsed = performance.now() - t0;
    if (elapsed > 0) restFactor = restFactorFor((activity.busyMs - busy0) / elapsed);
    if (full) await turn();
  }
  return {
    claimLimit: Math.min(batchSize, EMBEDDED_CLAIM_LIMIT),
    afterBatch(batchMs, full) {
      if (ingest && performance.now() - ingest.lastFlushAt < BUSY_WINDOW_MS) return rest(ingest, batchMs, full);
      restFactor = FIRST_REST_FACTOR;
      return full ? turn() : undefined;
    },
    afterWakeup: () => sleep(GATHER_MS),
  };
}

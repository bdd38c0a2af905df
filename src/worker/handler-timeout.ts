import { TekilError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Db, Queryable } from '../store/db.js';
import { pgErrorCode, PG_QUERY_CANCELED } from '../pg-error.js';
import { backendPid, cancelBackend } from '../store/sql/inbox/batch-connection.js';
import type { LazySavepoint } from './savepoint.js';

/**
 * The server process behind a batch transaction, so a statement a timed-out handler left running on
 * it can be cancelled from another connection. The pid is read once per batch, with the first
 * savepoint a handler takes: batches whose handlers never touch the database pay nothing. PGlite runs
 * each statement to its end before anything else runs: there is nothing to cancel there.
 */
export class BatchBackend {
  #pid: Promise<number> | undefined;

  constructor(
    private readonly db: Db,
    private readonly tx: Queryable,
  ) {}

  /** Reads the backend's pid (once); called before a handler's first statement. */
  learn = async (): Promise<void> => {
    if (this.db.kind !== 'postgres') return;
    this.#pid ??= backendPid.run(this.tx).then((r) => r.rows[0]!.pid);
    await this.#pid;
  };

  /**
   * Cancels the statement running on the batch's connection. A cancel that reaches the backend once
   * the statement has ended finds it idle and is ignored by Postgres, so the worker's next statement
   * (sent only after this answers and the handler's statement has settled) is not hit by it.
   */
  async cancelRunning(): Promise<void> {
    if (!this.#pid) return;
    const pid = await this.#pid;
    await cancelBackend.run(this.db, { pid });
  }
}

const TIMED_OUT: unique symbol = Symbol('timed out');

/**
 * The clock of a batch's handlers. They run one after another, so one timer serves them all: it is
 * armed when a handler starts and none is pending, and when it fires it either expires the handler
 * still running past its time or re-arms itself for the one running now. A timer (and a race of
 * promises) per handler cost more than the no-op handler itself.
 */
export class HandlerClock {
  #timer: NodeJS.Timeout | undefined;
  #running: { startedAt: number; expire: () => void } | undefined;

  constructor(readonly timeoutMs: number) {}

  /** Resolves with the handler's result, or with TIMED_OUT once it has run for timeoutMs. */
  watch<T>(result: PromiseLike<T>): Promise<T | typeof TIMED_OUT> {
    return new Promise<T | typeof TIMED_OUT>((resolve, reject) => {
      const running = { startedAt: Date.now(), expire: () => resolve(TIMED_OUT) };
      this.#running = running;
      this.#timer ??= setTimeout(this.#check, this.timeoutMs);
      const finished = () => {
        if (this.#running === running) this.#running = undefined;
      };
      result.then(
        (value) => {
          finished();
          resolve(value);
        },
        (err: unknown) => {
          finished();
          reject(err);
        },
      );
    });
  }

  #check = (): void => {
    this.#timer = undefined;
    const running = this.#running;
    if (!running) return;
    const left = running.startedAt + this.timeoutMs - Date.now();
    if (left > 0) {
      this.#timer = setTimeout(this.#check, left);
      return;
    }
    this.#running = undefined;
    running.expire();
  };

  /** At the end of the batch. */
  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}

function isPromiseLike<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/**
 * Runs a handler for at most the clock's timeout. Past it the handler is left behind, not stopped (a
 * promise cannot be): its view of the transaction is revoked, a statement it still has running is
 * cancelled, and the attempt fails with HANDLER_TIMEOUT (transient: retried later). The caller then
 * rolls the savepoint back, so what the handler wrote before the timeout does not commit either.
 */
export async function runWithTimeout<T>(
  run: () => PromiseLike<T> | T,
  clock: HandlerClock,
  savepoint: LazySavepoint,
  backend: BatchBackend,
  logger: Logger,
): Promise<T> {
  const result = run();
  if (!isPromiseLike(result)) return result; // a synchronous handler cannot be left behind
  const first = await clock.watch(result);
  if (first !== TIMED_OUT) return first;
  const err = new TekilError('HANDLER_TIMEOUT', `handler timed out after ${clock.timeoutMs} ms`, {
    hint: 'raise worker.handler_timeout (at most half of worker.lease), or make the handler end sooner',
  });
  savepoint.revoke(err);
  // What the abandoned handler does later is only logged: its outcome is already decided.
  Promise.resolve(result).catch((late: unknown) => {
    const why = pgErrorCode(late) === PG_QUERY_CANCELED ? 'its statement was cancelled' : 'it failed after its timeout';
    logger.debug({ err: late }, `a timed-out handler ended: ${why}`);
  });
  if (savepoint.busy) await backend.cancelRunning();
  await savepoint.settled();
  throw err;
}

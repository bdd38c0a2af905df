import { TekilError } from '../errors.js';
import type { Queryable, QueryResult } from '../store/db.js';
import { savepointStatements } from '../store/sql/inbox/batch-connection.js';

/**
 * A view of the batch transaction for one delivery. The savepoint is only taken when the handler
 * first writes or reads through it, so a handler that never touches the database costs no round trip;
 * when it does, a throw rolls back this delivery's work alone and its neighbours still commit.
 *
 * A handler that outlives its timeout keeps its `ctx.tx`: `revoke` turns that view off, so a write the
 * handler makes later is refused instead of landing in a neighbour's savepoint and committing.
 */
export class LazySavepoint implements Queryable {
  /**
   * Taking the savepoint (learning the backend's pid first), shared by every statement: each one
   * awaits it before it is sent, so a handler that sends several statements at once cannot get one
   * onto the connection ahead of the SAVEPOINT, where a rollback of this delivery would miss it.
   */
  #opening: Promise<void> | undefined;
  #revoked: TekilError | undefined;
  #closed = false;
  /** Statements sent through this view that have not answered yet. */
  readonly #inFlight = new Set<Promise<unknown>>();

  constructor(
    private readonly batchTx: Queryable,
    private readonly name: string,
    /** Called before the savepoint is first taken (the batch learns its backend's pid there). */
    private readonly beforeOpen?: () => Promise<void>,
  ) {}

  /** What the handler gets as `ctx.tx`. */
  get tx(): Queryable {
    return this;
  }

  /** True while a statement sent through this view is running. */
  get busy(): boolean {
    return this.#inFlight.size > 0;
  }

  query<R>(sql: string, params?: readonly unknown[]): Promise<QueryResult<R>> {
    return this.#track(async () => {
      await this.#ensure();
      return this.batchTx.query<R>(sql, params);
    });
  }

  exec(sql: string): Promise<void> {
    return this.#track(async () => {
      await this.#ensure();
      await this.batchTx.exec(sql);
    });
  }

  #track<T>(run: () => Promise<T>): Promise<T> {
    if (this.#revoked) return Promise.reject(this.#revoked);
    if (this.#closed) {
      return Promise.reject(new TekilError('INTERNAL', 'ctx.tx is closed: the handler already returned or threw (await every statement before returning)'));
    }
    const running = run();
    const settled = running.then(
      () => undefined,
      () => undefined,
    );
    this.#inFlight.add(settled);
    void settled.then(() => this.#inFlight.delete(settled));
    return running;
  }

  #ensure(): Promise<void> {
    this.#opening ??= (async () => {
      await this.beforeOpen?.();
      await savepointStatements(this.name).take.run(this.batchTx);
    })();
    return this.#opening;
  }

  /** From now on every statement through this view is refused with `reason`. */
  revoke(reason: TekilError): void {
    this.#revoked = reason;
  }

  /** Resolves once every statement sent through this view has answered (or failed). */
  async settled(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.all([...this.#inFlight]);
  }

  /**
   * Once the delivery's outcome is settled its view closes: a statement the handler sends later (from a
   * timer, or a promise it did not await) would run outside any savepoint of its delivery and commit
   * with the batch, so it is refused.
   */
  #close(): void {
    // A flag, not the error itself: an Error captures a stack, and this runs for every delivery.
    this.#closed = true;
  }

  /** Keeps the work (it commits with the batch). */
  async release(): Promise<void> {
    this.#close();
    const opening = this.#opening;
    if (!opening) return;
    this.#opening = undefined;
    await opening; // a savepoint still being taken is released only once it exists
    await savepointStatements(this.name).release.run(this.batchTx);
  }

  /** Undoes the work of this delivery only. */
  async rollback(): Promise<void> {
    this.#close();
    const opening = this.#opening;
    if (!opening) return;
    this.#opening = undefined;
    // Throws when taking the savepoint failed: the transaction is unusable then, and the caller gives
    // the batch up (the leases bring its deliveries back).
    await opening;
    await savepointStatements(this.name).rollbackTo.run(this.batchTx);
    await savepointStatements(this.name).release.run(this.batchTx);
  }
}

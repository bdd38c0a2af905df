import { TekilError } from '../errors.js';
import type { Queryable, QueryResult } from '../store/db.js';
import { releaseSavepointSql, rollbackToSavepointSql, savepointSql } from '../store/sql/inbox/batch-connection.js';

/**
 * A view of the batch transaction for one delivery. The savepoint is only taken when the handler
 * first writes or reads through it, so a handler that never touches the database costs no round trip;
 * when it does, a throw rolls back this delivery's work alone and its neighbours still commit.
 *
 * A handler that outlives its timeout keeps its `ctx.tx`: `revoke` turns that view off, so a write the
 * handler makes later is refused instead of landing in a neighbour's savepoint and committing.
 */
export class LazySavepoint implements Queryable {
  #open = false;
  #revoked: TekilError | undefined;
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
    const running = run();
    const settled = running.then(
      () => undefined,
      () => undefined,
    );
    this.#inFlight.add(settled);
    void settled.then(() => this.#inFlight.delete(settled));
    return running;
  }

  async #ensure(): Promise<void> {
    if (this.#open) return;
    this.#open = true;
    await this.beforeOpen?.();
    await this.batchTx.query(savepointSql(this.name));
  }

  /** From now on every statement through this view is refused with `reason`. */
  revoke(reason: TekilError): void {
    this.#revoked = reason;
  }

  /** Resolves once every statement sent through this view has answered (or failed). */
  async settled(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.all([...this.#inFlight]);
  }

  /** Keeps the work (it commits with the batch). */
  async release(): Promise<void> {
    if (!this.#open) return;
    this.#open = false;
    await this.batchTx.query(releaseSavepointSql(this.name));
  }

  /** Undoes the work of this delivery only. */
  async rollback(): Promise<void> {
    if (!this.#open) return;
    this.#open = false;
    await this.batchTx.query(rollbackToSavepointSql(this.name));
    await this.batchTx.query(releaseSavepointSql(this.name));
  }
}

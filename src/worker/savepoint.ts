import type { Queryable, QueryResult } from '../store/db.js';

/**
 * A view of the batch transaction for one delivery. The savepoint is only taken when the handler
 * first writes or reads through it, so a handler that never touches the database costs no round trip;
 * when it does, a throw rolls back this delivery's work alone and its neighbours still commit.
 */
export class LazySavepoint implements Queryable {
  #open = false;

  constructor(
    private readonly batchTx: Queryable,
    private readonly name: string,
  ) {}

  /** What the handler gets as `ctx.tx`. */
  get tx(): Queryable {
    return this;
  }

  async query<R>(sql: string, params?: readonly unknown[]): Promise<QueryResult<R>> {
    await this.#ensure();
    return this.batchTx.query<R>(sql, params);
  }

  async exec(sql: string): Promise<void> {
    await this.#ensure();
    await this.batchTx.exec(sql);
  }

  async #ensure(): Promise<void> {
    if (this.#open) return;
    this.#open = true;
    await this.batchTx.query(`SAVEPOINT ${this.name}`);
  }

  /** Keeps the work (it commits with the batch). */
  async release(): Promise<void> {
    if (!this.#open) return;
    this.#open = false;
    await this.batchTx.query(`RELEASE SAVEPOINT ${this.name}`);
  }

  /** Undoes the work of this delivery only. */
  async rollback(): Promise<void> {
    if (!this.#open) return;
    this.#open = false;
    await this.batchTx.query(`ROLLBACK TO SAVEPOINT ${this.name}`);
    await this.batchTx.query(`RELEASE SAVEPOINT ${this.name}`);
  }
}

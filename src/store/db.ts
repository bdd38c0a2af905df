/**
 * The one storage interface tekil uses. Both adapters speak Postgres SQL with `$n` parameters:
 * node-postgres against a server (production) and PGlite in-process (the embedded default).
 */
export interface QueryResult<R> {
  rows: R[];
  rowCount: number;
}

export interface QueryOptions {
  /**
   * Runs the statement as a named prepared statement: parsed (and, once Postgres settles on a generic
   * plan, planned) once per connection instead of on every call. For tekil's hot statements, whose
   * text never changes; one name must always go with one text. PGlite prepares it too
   * (src/store/pglite-prepared.ts). The Postgres adapter ignores it when prepared statements are turned
   * off (`store.prepared_statements`).
   */
  name?: string;
  /**
   * The statement's best plan depends on a table's size, which changes fast (a queue's claim): the
   * embedded store runs it unnamed, parsed and planned on every run. A named statement's generic plan
   * is kept until the table's statistics change, which on Postgres autovacuum's ANALYZE sees to; PGlite
   * runs no autovacuum, and a claim planned while the queue was empty kept reading it whole as it grew
   * (2 ms a claim of 64 at 11 queued deliveries, 160 ms at 42,000).
   */
  sizeDependentPlan?: boolean;
}

/** The name an embedded-store adapter prepares a statement under, or undefined to send it unnamed. */
export function pgliteStatementName(options: QueryOptions | undefined): string | undefined {
  return options?.sizeDependentPlan ? undefined : options?.name;
}

/**
 * Marks tekil's own Queryables (the store adapters'), which accept QueryOptions as a third argument.
 * Code that also takes a caller's node-postgres client (publish) checks it before passing a name: to
 * node-postgres a third argument is a callback.
 */
export const ACCEPTS_QUERY_OPTIONS: unique symbol = Symbol('tekil.acceptsQueryOptions');

export function acceptsQueryOptions(q: object): q is Pick<Queryable, 'query'> {
  return ACCEPTS_QUERY_OPTIONS in q;
}

export interface Queryable {
  readonly [ACCEPTS_QUERY_OPTIONS]?: true;
  query<R = Record<string, unknown>>(sql: string, params?: readonly unknown[], options?: QueryOptions): Promise<QueryResult<R>>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
}

export type StoreKind = 'postgres' | 'pglite';

export interface Db extends Queryable {
  readonly kind: StoreKind;
  /** Runs `fn` in one transaction; commits when it resolves, rolls back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /**
   * A separate small pool on the same store, opened with the same settings (prepared statements, jit,
   * the same URL through the same pooler), for a role whose hot statements must not queue behind the
   * others' (the dispatcher). On PGlite, a single connection, it is the store itself and `close` does
   * nothing.
   */
  openPool(options: { applicationName: string; max: number }): Queryable & { close(): Promise<void> };
  /**
   * Subscribes to a NOTIFY channel; resolves to an unsubscribe function. A dropped connection is
   * re-established by the adapter; since notifications sent meanwhile are lost, `onNotify('')` is called
   * after each reconnect, so a subscriber treats any call as "look for work now", whatever the payload.
   */
  listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

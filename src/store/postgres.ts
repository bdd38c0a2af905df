import pg from 'pg';
import type { Db, Queryable, QueryOptions, QueryResult } from './db.js';
import { TekilError } from '../errors.js';

// bytea comes back as Buffer already; int8 (counts) as a JS number is safe for our ranges.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export interface PostgresOptions {
  connectionString: string;
  max?: number;
  applicationName?: string;
  /**
   * Named prepared statements for the hot queries (default true). Turn off behind a pooler that
   * cannot keep them across transactions (PgBouncer in transaction mode before 1.21, or without
   * max_prepared_statements).
   */
  preparedStatements?: boolean;
  /**
   * Sends `jit = off` as a startup option (default true). PgBouncer rejects startup options it does
   * not know unless they are in its ignore_startup_parameters: turn this off there and set
   * `ALTER ROLE … SET jit = off` instead.
   */
  disableJit?: boolean;
}

function wrap(client: pg.Pool | pg.PoolClient, prepared: boolean): Queryable {
  return {
    async query<R>(sql: string, params?: readonly unknown[], options?: QueryOptions): Promise<QueryResult<R>> {
      const values = params as unknown[] | undefined;
      const res = prepared && options?.name ? await client.query({ name: options.name, text: sql, values }) : await client.query(sql, values);
      return { rows: res.rows as R[], rowCount: res.rowCount ?? 0 };
    },
    async exec(sql: string): Promise<void> {
      await client.query(sql); // no parameters: the simple protocol accepts several statements
    },
  };
}

function createPool(options: PostgresOptions): pg.Pool {
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.max ?? 10,
    application_name: options.applicationName ?? 'tekil',
    connectionTimeoutMillis: 5_000,
    // tekil's statements are short; JIT compilation only ever costs them. It kicks in when the planner's
    // estimate is high, e.g. on a freshly filled queue that has no statistics yet, and then adds
    // close to a second of compiling to every claim. An `options` in the connection string wins.
    ...(options.disableJit === false ? {} : { options: '-c jit=off' }),
  });
  // An idle client whose server went away emits 'error' on the pool; without a listener that kills
  // the process. The next query on a fresh client reports the outage to its caller instead.
  pool.on('error', () => {});
  return pool;
}

export function createPostgresDb(options: PostgresOptions): Db {
  const pool = createPool(options);
  const prepared = options.preparedStatements ?? true;
  const root = wrap(pool, prepared);
  return {
    kind: 'postgres',
    query: root.query,
    exec: root.exec,
    async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      const client = await pool.connect();
      let broken = false;
      // A checked-out client whose server goes away (restart, failover) emits 'error'; the pool only
      // listens on idle clients, so without this the process would die instead of the query failing.
      const onError = () => {
        broken = true;
      };
      client.on('error', onError);
      try {
        await client.query('BEGIN');
        const result = await fn(wrap(client, prepared));
        await client.query('COMMIT');
        return result;
      } catch (err) {
        try {
          await client.query('ROLLBACK');
        } catch {
          broken = true; // the connection is gone; do not return it to the pool
        }
        throw err;
      } finally {
        client.off('error', onError);
        client.release(broken);
      }
    },
    openPool({ applicationName, max }) {
      const own = createPool({ ...options, applicationName, max });
      return { ...wrap(own, prepared), close: () => own.end() };
    },
    async listen(channel, onNotify) {
      const client = new pg.Client({ connectionString: options.connectionString, application_name: 'tekil-listen' });
      client.on('error', () => {});
      await client.connect();
      client.on('notification', (msg) => {
        if (msg.channel === channel) onNotify(msg.payload ?? '');
      });
      await client.query(`LISTEN ${quoteIdent(channel)}`);
      return async () => {
        await client.end().catch(() => {});
      };
    },
    async close() {
      await pool.end();
    },
  };
}

export function quoteIdent(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new TekilError('INVALID_IDENTIFIER', `invalid identifier: ${name}`);
  return `"${name}"`;
}

import pg from 'pg';
import { ACCEPTS_QUERY_OPTIONS, type Db, type Queryable, type QueryOptions, type QueryResult } from './db.js';
import { quoteIdent } from './sql/statement.js';

const INT8 = pg.types.builtins.INT8;
const int8AsNumber = (value: string): number => Number(value);

/**
 * How tekil's own connections read values: int8 (counts, ids) as a JS number, safe for tekil's ranges;
 * bytea comes back as a Buffer already. Set per pool, never in pg's global registry: an application
 * that embeds tekil keeps its own pools' parsers (a bigint stays an exact string there).
 */
const tekilTypes = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8 && format !== 'binary' ? int8AsNumber : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser'],
};

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
    [ACCEPTS_QUERY_OPTIONS]: true,
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
    types: tekilTypes,
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
    listen(channel, onNotify) {
      return listenWithReconnect(options.connectionString, channel, onNotify);
    },
    async close() {
      await pool.end();
    },
  };
}

/** Backoff between attempts to re-establish a lost LISTEN connection: 100 ms doubling to 30 s, jittered. */
const LISTEN_RETRY_MIN_MS = 100;
const LISTEN_RETRY_MAX_MS = 30_000;

/**
 * LISTEN needs one connection of its own for as long as the subscription lasts. When that connection
 * drops (a restart, a failover, an idle timeout, pg_terminate_backend) it is re-established with
 * backoff; notifications sent meanwhile are lost, so after each reconnect the subscriber is called
 * with an empty payload and polls for what it missed. Only the first connection's failure is thrown.
 */
async function listenWithReconnect(connectionString: string, channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>> {
  const statement = `LISTEN ${quoteIdent(channel)}`;
  let current: pg.Client | undefined;
  let closed = false;
  let failures = 0;
  let retry: NodeJS.Timeout | undefined;

  const connect = async (): Promise<pg.Client> => {
    const client = new pg.Client({ connectionString, application_name: 'tekil-listen' });
    // Errors surface as 'end' below (or as the failed connect); without a listener they would kill the process.
    client.on('error', () => {});
    client.on('notification', (msg) => {
      if (msg.channel === channel) onNotify(msg.payload ?? '');
    });
    client.on('end', () => {
      if (client === current && !closed) {
        current = undefined;
        scheduleReconnect();
      }
    });
    try {
      await client.connect();
      await client.query(statement);
    } catch (err) {
      await client.end().catch(() => {});
      throw err;
    }
    return client;
  };

  const scheduleReconnect = () => {
    const ceiling = Math.min(LISTEN_RETRY_MAX_MS, LISTEN_RETRY_MIN_MS * 2 ** failures);
    retry = setTimeout(
      () => {
        retry = undefined;
        connect().then(
          async (client) => {
            if (closed) return client.end().catch(() => {});
            current = client;
            failures = 0;
            onNotify('');
          },
          () => {
            failures++;
            if (!closed) scheduleReconnect();
          },
        );
      },
      ceiling / 2 + Math.random() * (ceiling / 2),
    );
    // A pending retry must not keep the process alive on its own.
    retry.unref();
  };

  current = await connect();
  return async () => {
    closed = true;
    if (retry) clearTimeout(retry);
    await current?.end().catch(() => {});
    current = undefined;
  };
}

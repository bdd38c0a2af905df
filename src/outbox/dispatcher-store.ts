import { createHash } from 'node:crypto';
import pg from 'pg';
import type { Db, Queryable, QueryResult } from '../store/db.js';

/**
 * The dispatcher's own small connection pool (Postgres only). Its few statements run thousands of
 * times a second, so they are prepared once per connection instead of parsed and planned each time,
 * and a busy dispatcher never takes connections the API and the receiver need.
 */
export interface DispatcherConnection extends Queryable {
  close(): Promise<void>;
}

export function createDispatcherConnection(connectionString: string, size: number): DispatcherConnection {
  const pool = new pg.Pool({ connectionString, max: size, application_name: 'tekil-dispatcher', connectionTimeoutMillis: 5_000 });
  pool.on('error', () => {}); // a dead idle connection is replaced on the next query
  const names = new Map<string, string>();
  const nameOf = (sql: string): string => {
    let name = names.get(sql);
    if (!name) {
      name = `tekil_${createHash('sha1').update(sql).digest('hex').slice(0, 16)}`;
      names.set(sql, name);
    }
    return name;
  };
  return {
    async query<R>(sql: string, params?: readonly unknown[]): Promise<QueryResult<R>> {
      const res = await pool.query({ name: nameOf(sql), text: sql, values: params as unknown[] | undefined });
      return { rows: res.rows as R[], rowCount: res.rowCount ?? 0 };
    },
    async exec(sql: string): Promise<void> {
      await pool.query(sql);
    },
    async close() {
      await pool.end();
    },
  };
}

/** The dispatcher's queries go to its own pool on Postgres, and to the shared store otherwise. */
export function dispatcherQueryable(db: Db, databaseUrl: string | undefined): { queryable: Queryable; close(): Promise<void> } {
  if (db.kind !== 'postgres' || !databaseUrl) return { queryable: db, close: async () => {} };
  const connection = createDispatcherConnection(databaseUrl, 4);
  return { queryable: connection, close: () => connection.close() };
}

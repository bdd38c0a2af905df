import { PGlite } from '@electric-sql/pglite';
import { ACCEPTS_QUERY_OPTIONS, pgliteStatementName, type Db, type Queryable, type QueryOptions, type QueryResult } from './db.js';
import { namedStatements, type RunNamedStatement } from './pglite-prepared.js';
import { quoteIdent } from './sql/statement.js';

interface PgliteQueryable {
  query<R>(sql: string, params?: unknown[]): Promise<{ rows: R[]; rowCount?: number; affectedRows?: number }>;
  exec(sql: string): Promise<unknown>;
}

function wrap(target: PgliteQueryable, runNamed: RunNamedStatement, inTransaction: boolean): Queryable {
  return {
    [ACCEPTS_QUERY_OPTIONS]: true,
    // A named statement is prepared once on PGlite's session (pglite-prepared.ts).
    async query<R>(sql: string, params?: readonly unknown[], options?: QueryOptions): Promise<QueryResult<R>> {
      // PGlite's own tx.query refuses once its transaction has ended; the named path must too.
      if (inTransaction && (target as { closed?: boolean }).closed) throw new Error('Transaction is closed');
      const name = pgliteStatementName(options);
      const res = name ? await runNamed(name, sql, params, inTransaction) : await target.query<R>(sql, params as unknown[] | undefined);
      // rowCount is the statement's own count (its command tag), as node-postgres gives it; affectedRows
      // sums only INSERT, UPDATE and DELETE tags, so a SELECT (even one over data-modifying CTEs) had 0.
      return { rows: res.rows as R[], rowCount: res.rowCount ?? res.affectedRows ?? res.rows.length };
    },
    async exec(sql: string): Promise<void> {
      await target.exec(sql);
    },
  };
}

/**
 * PGlite in this thread. PGlite is a single connection: queries are serialised by PGlite itself, and
 * `transaction` holds the connection for its whole duration. `dataDir` undefined means in memory.
 * tekil itself runs the embedded store on a thread of its own (pglite-thread.ts); this one serves
 * scripts and the ingest bench's store-only line (PGlite alone, nothing else on its thread).
 */
export async function createPgliteDb(dataDir?: string): Promise<Db> {
  return wrapPglite(new PGlite(dataDir, PGLITE_TYPE_OPTIONS));
}

const BYTEA_OID = 17;

/**
 * How PGlite converts bytea, tekil's bodies and payloads. PGlite's own converters work a byte at a
 * time in JavaScript: a parameter became hex text through one `toString(16)` and `padStart` per byte
 * (and Postgres then decoded the hex), and a result came back through one `substring` and `parseInt`
 * per byte, about 20 µs for a 330-byte body. Every batch the receiver inserts and every batch the
 * worker claims paid for it on PGlite's thread. Parameters now go as they are: the protocol's binary
 * format for bytea is the bytes themselves. Results are read from hex by Buffer's native decoder, and
 * are Buffers, as node-postgres gives them.
 */
export const PGLITE_TYPE_OPTIONS = {
  parsers: { [BYTEA_OID]: parseByteaHex },
  // A Uint8Array bind value is sent in binary format (pg-protocol's bind): no text at all. PGlite's
  // Serializer type says string; a Uint8Array goes through as the bind value.
  serializers: { [BYTEA_OID]: serializeBytea as (x: unknown) => string },
};

/**
 * A Buffer of its own, not a view into node's shared pool (Buffer.from of a short string is one): the
 * threaded store sends results to the main thread by structured clone, which copies a view's whole
 * backing store, other allocations' bytes included.
 */
function parseByteaHex(hex: string): Buffer {
  const bytes = Buffer.allocUnsafeSlow((hex.length - 2) / 2);
  bytes.write(hex.slice(2), 'hex');
  return bytes;
}

/** Bytes as they are; text as Postgres' bytea input (`\x…`), as node-postgres sends it; nothing else. */
function serializeBytea(value: unknown): Uint8Array | string {
  if (value instanceof Uint8Array || typeof value === 'string') return value;
  throw new TypeError('Invalid input for bytea type: a Uint8Array or a string');
}

/**
 * Settings for PGlite's one session, run once it is open. `wal_init_zero = off`: PGlite wrote every new
 * 16 MB WAL segment full of zeros before using it, through its file system layer, a pause of tens of
 * milliseconds for every statement waiting behind it, every 16 MB of WAL (about every two seconds while
 * receiving at full speed). The zeros only make sure the disk space is there before the WAL needs it;
 * PGlite does not fsync anyway, and Postgres writes the segment's pages as it fills them either way.
 */
export const PGLITE_SESSION_SETUP = 'SET wal_init_zero = off';

/** Wraps an existing PGlite instance (tekil then owns it and closes it). */
export async function wrapPglite(pg: PGlite): Promise<Db> {
  await pg.waitReady;
  await pg.exec(PGLITE_SESSION_SETUP);
  const runNamed = namedStatements(pg);
  const root = wrap(pg as unknown as PgliteQueryable, runNamed, false);
  return {
    ...root,
    kind: 'pglite',
    openPool() {
      return { ...root, close: async () => {} };
    },
    transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      return pg.transaction((tx) => fn(wrap(tx as unknown as PgliteQueryable, runNamed, true)));
    },
    async listen(channel, onNotify) {
      quoteIdent(channel); // validates the name; PGlite quotes nothing itself
      const unsubscribe = await pg.listen(channel, onNotify);
      return async () => {
        await unsubscribe();
      };
    },
    async close() {
      await pg.close();
    },
  };
}

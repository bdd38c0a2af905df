/**
 * Messages between the embedded store's owner (the main thread) and the worker thread that runs
 * PGlite. Plain data only: everything crosses by structured clone.
 */

/** What the worker is started with (`workerData`). */
export interface PgliteThreadOptions {
  /** The data directory; undefined keeps the database in memory. */
  dataDir?: string | undefined;
  /** A dump (`dumpDataDir`) to start from instead of an empty database (into `dataDir` when given, which must be new). */
  loadDataDir?: Uint8Array | undefined;
}

/** `tx`: the transaction a statement belongs to; absent, the statement runs on its own. */
export type PgliteRequest =
  /** `name`: run as that named prepared statement (QueryOptions.name). */
  | { id: number; kind: 'query'; sql: string; params: readonly unknown[] | undefined; tx?: number | undefined; name?: string | undefined }
  | { id: number; kind: 'exec'; sql: string; tx?: number | undefined }
  | { id: number; kind: 'begin' }
  | { id: number; kind: 'end'; tx: number; commit: boolean }
  | { id: number; kind: 'listen'; channel: string }
  | { id: number; kind: 'unlisten'; channel: string }
  | { id: number; kind: 'dump' }
  | { id: number; kind: 'close' };

/** An error as the store raised it: its message and its fields (`code`, `detail`, `constraint`, …). */
export interface PgliteThreadError {
  name: string;
  message: string;
  fields: Record<string, unknown>;
}

export type PgliteReply =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: PgliteThreadError }
  /** The worker finished opening the store (or failed to: `error`). */
  | { kind: 'ready'; error?: PgliteThreadError }
  | { kind: 'notify'; channel: string; payload: string };

/**
 * Rows and the count of one statement, as the worker sends them back. The count is the statement's
 * own, from its command tag (rows a SELECT returned, rows an UPDATE changed), as node-postgres gives
 * it; undefined for a statement without one.
 */
export interface PgliteThreadResult {
  rows: unknown[];
  rowCount: number | undefined;
}

/** Keeps what a caller reads from a store error (SQLSTATE and its details), drops the rest. */
export function describeError(err: unknown): PgliteThreadError {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err), fields: {} };
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(err)) {
    if (value === undefined || typeof value === 'function') continue;
    if (typeof value === 'object' && value !== null) continue; // a nested object would not clone reliably
    fields[key] = value;
  }
  return { name: err.name, message: err.message, fields };
}

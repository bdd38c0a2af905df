/**
 * Postgres reports failures with a five-character SQLSTATE on `err.code` (node-postgres and PGlite
 * alike). These read it in one place instead of casting at every call site.
 */
export function pgErrorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

export const PG_UNIQUE_VIOLATION = '23505';
export const PG_FOREIGN_KEY_VIOLATION = '23503';
/** Raised by tekil's own functions for a row named by the caller that is not there (migration 016's tenant check). */
export const PG_NO_DATA_FOUND = 'P0002';
export const PG_DEADLOCK_DETECTED = '40P01';
export const PG_QUERY_CANCELED = '57014';

/**
 * SQLSTATE classes that mean "the store is unreachable or busy", not "this statement is bad":
 * connection exceptions, insufficient resources, operator intervention, system errors and
 * transaction rollbacks (serialisation, deadlock). Errors without a SQLSTATE (socket errors, pool
 * timeouts, a closed PGlite) count as unavailability too.
 */
const TRANSIENT_CLASSES = new Set(['08', '53', '57', '58', '40']);

export function isStoreUnavailable(err: unknown): boolean {
  const code = pgErrorCode(err);
  return code === undefined || TRANSIENT_CLASSES.has(code.slice(0, 2));
}

/**
 * True when the store refused a statement's values, not the statement or the connection: a data
 * exception (class 22: a time beyond the timestamp range, a NUL in text) or an integrity violation
 * (class 23). The same values fail the same way again; a batch writer isolates the row instead.
 */
export function isValueRefusal(err: unknown): boolean {
  const sqlState = pgErrorCode(err);
  return sqlState !== undefined && (sqlState.startsWith('22') || sqlState.startsWith('23'));
}

/** Socket error codes of a connection that could not be made or was lost. */
const SOCKET_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNABORTED']);

/**
 * What the drivers throw, with no SQLSTATE, when the store cannot be reached: node-postgres's pool
 * timing out or ended, a connection that dropped or timed out, and the embedded store closed or its
 * thread gone. Matched by these texts (the drivers give them no code) or a socket error code.
 */
const UNREACHABLE_TEXTS = [
  'timeout exceeded when trying to connect',
  'Connection terminated',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
  'Cannot use a pool after calling end on the pool',
  'Query read timeout',
  'PGlite is closed',
  'the embedded store is closed',
  "the embedded store's thread",
];

/**
 * True when the error says the store could not be reached (not that a statement was refused): a 503
 * to a client, never a 500. Unlike isStoreUnavailable, an error without a SQLSTATE that is not one of
 * the drivers' own (a bug, say) is not counted.
 */
export function isStoreUnreachable(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (pgErrorCode(e) !== undefined) return TRANSIENT_CLASSES.has(pgErrorCode(e)!.slice(0, 2));
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && SOCKET_ERRORS.has(code)) return true;
    if (UNREACHABLE_TEXTS.some((text) => e instanceof Error && e.message.startsWith(text))) return true;
  }
  return false;
}

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

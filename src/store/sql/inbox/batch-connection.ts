/**
 * Statements on a batch's own transaction outside its hot path: one handler's savepoint, and what it
 * takes to cancel a statement a timed-out handler left running. Savepoint names are the worker's own
 * constants (never user input).
 */
export const savepointSql = (name: string) => `SAVEPOINT ${name}`;
export const releaseSavepointSql = (name: string) => `RELEASE SAVEPOINT ${name}`;
export const rollbackToSavepointSql = (name: string) => `ROLLBACK TO SAVEPOINT ${name}`;

/** The server process behind the batch's connection (also behind a pooler: it is the server's). */
export const BACKEND_PID_SQL = 'SELECT pg_backend_pid() AS pid';
/** Sent on another connection; a backend idle by then ignores it. */
export const CANCEL_BACKEND_SQL = 'SELECT pg_cancel_backend($1)';

import { defineStatement } from './statement.js';

/** A transaction-scoped advisory lock, without waiting: `locked` is true when this transaction now holds it. */
export const tryAdvisoryLock = defineStatement<{ key: number }, { locked: boolean }>(
  'tekil_try_advisory_xact_lock',
  'SELECT pg_try_advisory_xact_lock($key) AS locked',
);

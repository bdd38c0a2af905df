import { defineStatement } from '../statement.js';

/**
 * Serialises the start of a source's runs, for the rest of the starting transaction: one start reads
 * the source's last run and records its own before another can look. A transaction-scoped advisory
 * lock in a key space of its own (7340002, the source's hash); a rare collision of two sources' hashes
 * only makes their starts wait on each other for a moment.
 */
export const lockSourceRunStart = defineStatement<{ source: string }>(
  'reconcile_lock_source_run_start',
  `SELECT pg_advisory_xact_lock(7340002, hashtext($source)) IS NOT NULL AS locked`,
);

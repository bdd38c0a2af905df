import { defineStatement } from '../statement.js';

/**
 * Takes a transaction-scoped advisory lock on every resource of a batch, in one statement. The keys
 * are distinct and taken in ascending order of the lock key (the hash), the same order in every
 * batch, so two batches can wait on each other's locks but never in a cycle. Two resources whose keys
 * collide only share a lock, which costs waiting, never correctness. (Why: src/worker/lock-resources.ts.)
 */
export const lockResourcesStatement = defineStatement<{ keys: string[] }, { locked: string }>(
  'tekil_lock_resources',
  `
SELECT count(pg_advisory_xact_lock(k.key)) AS locked
FROM (SELECT DISTINCT hashtextextended(r, 0) AS key FROM unnest($keys::text[]) AS r ORDER BY 1 OFFSET 0) AS k`,
  'prepared',
);

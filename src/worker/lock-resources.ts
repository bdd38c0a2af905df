import type { Queryable } from '../store/db.js';
import type { ClaimedDelivery } from './claim-due-deliveries.js';

/**
 * Takes a transaction-scoped advisory lock on every resource of the batch, in one statement, before
 * anything of the batch runs; they are held until the batch commits or rolls back.
 *
 * Why: the claim keeps a resource's deliveries apart by reading rows, and a claim that is not yet
 * committed is invisible to another claimer. An earlier event of a resource that arrives while a
 * later one is being claimed can therefore be claimed by another batch at the same moment. Both
 * batches then meet here, and the second waits until the first has committed: deliveries of one
 * resource are never processed concurrently, with or without `ordering`.
 *
 * The keys are distinct and taken in ascending order of the lock key (the hash), the same order in
 * every batch, so two batches can wait on each other's locks but never in a cycle. Two resources
 * whose keys collide only share a lock, which costs waiting, never correctness.
 */
const LOCK_RESOURCES_SQL = `
SELECT count(pg_advisory_xact_lock(k.key)) AS locked
FROM (SELECT DISTINCT hashtextextended(r, 0) AS key FROM unnest($1::text[]) AS r ORDER BY 1 OFFSET 0) AS k`;

/** The advisory lock key text of a resource; the ordering guard and this lock agree on it. */
export function resourceLockKey(source: string, resourceId: string): string {
  return `${source}:${resourceId}`;
}

export async function lockBatchResources(tx: Queryable, rows: readonly ClaimedDelivery[]): Promise<void> {
  const keys: string[] = [];
  for (const row of rows) if (row.resource_id !== null) keys.push(resourceLockKey(row.source, row.resource_id));
  if (keys.length === 0) return;
  await tx.query(LOCK_RESOURCES_SQL, [keys], { name: 'tekil_lock_resources' });
}

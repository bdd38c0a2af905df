import type { Queryable } from '../store/db.js';
import { lockResourcesStatement } from '../store/sql/inbox/lock-resources.js';
import type { InboxClaimedDelivery } from './claim-due-deliveries.js';

/** The advisory lock key text of a resource; the ordering guard and this lock agree on it. */
export function resourceLockKey(source: string, resourceId: string): string {
  return `${source}:${resourceId}`;
}

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
 * The statement (src/store/sql/inbox/lock-resources.ts) takes the keys in one fixed order, so two
 * batches can wait on each other but never in a cycle.
 */

export async function lockBatchResources(tx: Queryable, rows: readonly InboxClaimedDelivery[]): Promise<void> {
  const keys: string[] = [];
  for (const row of rows) if (row.resource_id !== null) keys.push(resourceLockKey(row.source, row.resource_id));
  if (keys.length === 0) return;
  const stmt = lockResourcesStatement;
  await stmt.run(tx, { keys });
}

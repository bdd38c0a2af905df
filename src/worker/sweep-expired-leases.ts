import type { Queryable } from '../store/db.js';

export interface ExpiredLease {
  source: string;
  event_id: string;
  attempts: number;
  claimed_at: Date | null;
  locked_by: string | null;
}

/**
 * Deliveries whose worker vanished: still `processing` after the lease. Rows a live batch still holds
 * are row-locked by its transaction and skipped, so a slow batch is never taken over.
 */
const EXPIRED_SQL = `
SELECT source, event_id, attempts, claimed_at, locked_by
FROM inbox_deliveries
WHERE status = 'processing' AND locked_until < now()
ORDER BY locked_until
LIMIT $1
FOR UPDATE SKIP LOCKED`;

export async function selectExpiredLeases(tx: Queryable, limit: number): Promise<ExpiredLease[]> {
  return (await tx.query<ExpiredLease>(EXPIRED_SQL, [limit])).rows;
}

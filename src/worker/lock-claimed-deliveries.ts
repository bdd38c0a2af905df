import type { Queryable } from '../store/db.js';

export interface ClaimedDelivery {
  source: string;
  event_id: string;
  resource_id: string | null;
  event_type: string | null;
  occurred_at: Date | null;
  received_at: Date;
  body: Buffer | Uint8Array;
  content_type: string | null;
  headers: Record<string, string>;
  attempts: number;
  guard_bypass: boolean;
}

/**
 * First statement of a batch's processing transaction: takes row locks on the deliveries this batch
 * claimed and loads them. The locks last until the batch commits, so even when the lease runs out
 * mid-batch nobody can take these rows back while this transaction lives; a row whose lease expired
 * and was already re-claimed by another worker carries another token and is simply not returned.
 */
const LOCK_SQL = `
UPDATE inbox_deliveries
SET locked_until = now() + $2 * interval '1 millisecond'
WHERE status = 'processing' AND locked_by = $1
RETURNING source, event_id, resource_id, event_type, occurred_at, received_at, body, content_type,
          headers, attempts, guard_bypass`;

export async function lockClaimedDeliveries(tx: Queryable, token: string, leaseMs: number): Promise<ClaimedDelivery[]> {
  const res = await tx.query<ClaimedDelivery>(LOCK_SQL, [token, leaseMs]);
  // Provider time order inside the batch (rows of one resource never share a batch; this is for logs).
  return res.rows.sort((a, b) => time(a) - time(b) || a.received_at.getTime() - b.received_at.getTime());
}

function time(d: ClaimedDelivery): number {
  return (d.occurred_at ?? d.received_at).getTime();
}

import type { Queryable } from '../../db.js';

/** Claimed deliveries whose attempt never started (a stopping dispatcher) go back to pending at once. */
const RELEASE_UNSTARTED = `
WITH released AS (
  UPDATE outbox_deliveries d SET status = 'pending', attempts = d.attempts - 1, next_attempt_at = now(), lease = NULL
  FROM unnest($1::bigint[], $2::text[]) AS c (id, lease)
  WHERE d.id = c.id AND d.lease = c.lease AND d.status = 'sending'
  RETURNING d.id
)
-- The queue row keeps its due time: the delivery stays where it was in its endpoint's order.
UPDATE outbox_queue q SET lease_until = NULL FROM released WHERE q.delivery_id = released.id`;

export async function releaseUnstarted(db: Queryable, claims: ReadonlyArray<{ id: number; lease: string }>): Promise<void> {
  if (claims.length === 0) return;
  await db.query(RELEASE_UNSTARTED, [claims.map((c) => c.id), claims.map((c) => c.lease)]);
}

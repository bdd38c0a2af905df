import type { Queryable } from '../store/db.js';

/**
 * Claims up to `limit` due pending deliveries for one batch and commits the claim (status
 * `processing`, attempts + 1, a lease until `locked_until`, `locked_by` = the batch token).
 *
 * One delivery per resource at a time, in provider time: a delivery is not claimed while another
 * delivery of its resource is `processing`, or is `pending` and earlier in (occurred_at, received_at,
 * event_id). This holds under concurrent claimers because the rule is checked against rows, not
 * locks: a row another claimer has just locked still reads as `pending` (its claim is not committed),
 * so it keeps blocking its resource's later deliveries, and SKIP LOCKED keeps it from being taken twice.
 * Within one statement the earlier row also reads as pending, so one batch never holds two
 * deliveries of one resource.
 */
const CLAIM_SQL = `
WITH candidates AS (
  SELECT d.source, d.event_id
  FROM inbox_deliveries d
  WHERE d.status = 'pending' AND d.next_attempt_at <= now()
    AND (d.resource_id IS NULL OR NOT EXISTS (
      SELECT 1 FROM inbox_deliveries o
      WHERE o.source = d.source AND o.resource_id = d.resource_id
        AND o.status IN ('pending', 'processing') AND o.event_id <> d.event_id
        AND (o.status = 'processing'
             OR (coalesce(o.occurred_at, o.received_at), o.received_at, o.event_id)
              < (coalesce(d.occurred_at, d.received_at), d.received_at, d.event_id))))
  ORDER BY d.next_attempt_at
  LIMIT $1
  FOR UPDATE SKIP LOCKED
)
UPDATE inbox_deliveries d
SET status = 'processing', attempts = d.attempts + 1, locked_by = $3, claimed_at = now(),
    last_attempt_at = now(), locked_until = now() + $2 * interval '1 millisecond'
FROM candidates c
WHERE d.source = c.source AND d.event_id = c.event_id`;

export async function claimDueDeliveries(db: Queryable, options: { limit: number; leaseMs: number; token: string }): Promise<number> {
  const res = await db.query(CLAIM_SQL, [options.limit, options.leaseMs, options.token]);
  return res.rowCount;
}

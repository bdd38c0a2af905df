import type { Db } from '../store/db.js';

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
  /** Counting this attempt. */
  attempts: number;
  guard_bypass: boolean;
  /** The previous holder's lease had expired: that attempt was lost (recorded by the claim). */
  was_lost: boolean;
  /** Where the claimed row version is: the completion finds it without an index lookup. */
  row_ref: string;
}

/** Why a delivery's previous attempt is recorded as lost. */
export const LOST_ERROR = 'lease expired: the worker did not finish (crashed, killed or lost its connection)';

/**
 * Claims up to `limit` due deliveries for one batch and commits the claim: attempts + 1, a lease until
 * `locked_until`, `locked_by` = the batch token. The row stays `pending` (shown as processing while
 * the lease lives), so the update touches no indexed column and is written as a HOT update.
 *
 * A delivery whose lease expired (its worker died) is due again and is claimed like any other; the
 * claim records the lost attempt in `inbox_attempts` in the same statement.
 *
 * One delivery per resource at a time, in provider time: a delivery is not claimed while another
 * delivery of its resource holds a live lease, or is pending and earlier in (occurred_at, received_at,
 * event_id). This holds under concurrent claimers because the rule reads rows, not locks: a row
 * another claimer has just locked (claim not yet committed) still reads as pending and without a
 * lease, so when it is earlier it keeps blocking its resource's later deliveries, and SKIP LOCKED
 * keeps it from being taken twice. Within one statement the earlier row also reads as unclaimed, so
 * one batch never holds two deliveries of one resource.
 */
const CLAIM_SQL = `
WITH candidates AS (
  SELECT d.ctid AS row_ctid, d.source, d.event_id, d.locked_by AS prev_locked_by, d.claimed_at AS prev_claimed_at, d.attempts AS prev_attempts
  FROM inbox_deliveries d
  WHERE d.status = 'pending' AND d.next_attempt_at <= now()
    -- Evaluated once (an init plan): this statement is its own transaction, see claimDueDeliveries.
    AND (SELECT set_config('synchronous_commit', 'off', true)) = 'off'
    AND (d.locked_until IS NULL OR d.locked_until < now())
    AND (d.resource_id IS NULL OR NOT EXISTS (
      SELECT 1 FROM inbox_deliveries o
      WHERE o.source = d.source AND o.resource_id = d.resource_id
        AND o.status = 'pending' AND o.event_id <> d.event_id
        AND (o.locked_until >= now()
             OR (coalesce(o.occurred_at, o.received_at), o.received_at, o.event_id)
              < (coalesce(d.occurred_at, d.received_at), d.received_at, d.event_id))))
  ORDER BY d.next_attempt_at
  LIMIT $1
  FOR UPDATE SKIP LOCKED
), lost AS (
  INSERT INTO inbox_attempts (source, event_id, attempt, worker, started_at, finished_at, duration_ms, outcome, error)
  SELECT c.source, c.event_id, c.prev_attempts, c.prev_locked_by, coalesce(c.prev_claimed_at, now()), now(),
         (extract(epoch FROM now() - coalesce(c.prev_claimed_at, now())) * 1000)::int, 'lost', $4
  FROM candidates c
  WHERE c.prev_locked_by IS NOT NULL
)
UPDATE inbox_deliveries d
SET attempts = d.attempts + 1, locked_by = $3, claimed_at = now(), last_attempt_at = now(),
    locked_until = now() + $2 * interval '1 millisecond',
    last_error = CASE WHEN c.prev_locked_by IS NOT NULL THEN $4 ELSE d.last_error END
FROM candidates c
WHERE d.ctid = c.row_ctid
RETURNING d.source, d.event_id, d.resource_id, d.event_type, date_part('epoch', d.occurred_at) * 1000 AS occurred_ms,
          date_part('epoch', d.received_at) * 1000 AS received_ms, d.body,
          d.content_type, d.headers, d.attempts, d.guard_bypass, c.prev_locked_by IS NOT NULL AS was_lost,
          d.ctid::text AS row_ref`;

/**
 * The claim is one statement sent on its own, so it is its own transaction: one round trip, no
 * BEGIN/COMMIT. It commits without waiting for its WAL flush (`synchronous_commit` off, set by the
 * statement itself for this transaction only): a claim lost in a server crash only means the delivery
 * is unclaimed again, and the batch's own commit (synchronous) flushes the claim's WAL record before
 * its own, so an effect never outlives its claim. Answers the claimed rows in provider-time order.
 */
export async function claimDueDeliveries(db: Db, options: { limit: number; leaseMs: number; token: string }): Promise<ClaimedDelivery[]> {
  const res = await db.query<ClaimedRow>(CLAIM_SQL, [options.limit, options.leaseMs, options.token, LOST_ERROR]);
  return res.rows.map(toDelivery).sort((a, b) => providerTime(a) - providerTime(b) || a.received_at.getTime() - b.received_at.getTime());
}

/** Times travel as epoch milliseconds (float8): cheaper to print and read than timestamp text. */
type ClaimedRow = Omit<ClaimedDelivery, 'occurred_at' | 'received_at'> & { occurred_ms: number | null; received_ms: number };

function toDelivery(r: ClaimedRow): ClaimedDelivery {
  // A literal with every field, not a spread: the hot path reads these objects many times per batch.
  return {
    source: r.source,
    event_id: r.event_id,
    resource_id: r.resource_id,
    event_type: r.event_type,
    occurred_at: r.occurred_ms === null ? null : new Date(r.occurred_ms),
    received_at: new Date(r.received_ms),
    body: r.body,
    content_type: r.content_type,
    headers: r.headers,
    attempts: r.attempts,
    guard_bypass: r.guard_bypass,
    was_lost: r.was_lost,
    row_ref: r.row_ref,
  };
}

function providerTime(d: ClaimedDelivery): number {
  return (d.occurred_at ?? d.received_at).getTime();
}

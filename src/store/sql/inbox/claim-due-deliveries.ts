import { defineStatement, type Statement } from '../statement.js';

/**
 * Claims up to `limit` due deliveries for one batch (claimDueDeliveries sends it): on each queue row
 * attempts + 1, a lease until `locked_until`, `locked_by` = the batch token. The update touches no
 * indexed column of inbox_queue, so it is written as a HOT update. The delivery record is only read
 * (body, headers), by its primary key; nothing but the batch's completion writes it until then, so
 * the completion finds it by the ctid read here.
 *
 * A delivery whose lease expired (its worker died) is due again and is claimed like any other; the
 * claim records the lost attempt in `inbox_attempt_history` in the same statement.
 *
 * One delivery per resource at a time, in provider time: a delivery is not claimed while another
 * queued delivery of its resource holds a live lease, or is earlier in (provider_at, received_at,
 * event_id). This holds under concurrent claimers because the rule reads rows, not locks: a row
 * another claimer has just locked (claim not yet committed) still reads as unleased, so when it is
 * earlier it keeps blocking its resource's later deliveries, and SKIP LOCKED keeps it from being
 * taken twice. Within one statement the earlier row also reads as unclaimed, so one batch never
 * holds two deliveries of one resource. Dead (parked) deliveries block nothing.
 */
function claimText(limit: number): string {
  return `
WITH candidates AS (
  SELECT q.ctid AS row_ctid, q.source, q.event_id, q.locked_by AS prev_locked_by, q.claimed_at AS prev_claimed_at, q.attempts AS prev_attempts
  FROM inbox_queue q
  WHERE NOT q.dead AND q.next_attempt_at <= now()
    -- Evaluated once (an init plan): this statement is its own transaction, see claimDueDeliveries.
    AND (SELECT set_config('synchronous_commit', 'off', true)) = 'off'
    AND (q.locked_until IS NULL OR q.locked_until < now())
    AND (q.resource_id IS NULL OR NOT EXISTS (
      SELECT 1 FROM inbox_queue o
      WHERE o.resource_id = q.resource_id AND o.source = q.source AND NOT o.dead AND o.event_id <> q.event_id
        AND (o.locked_until >= now()
             OR (o.provider_at, o.received_at, o.event_id) < (q.provider_at, q.received_at, q.event_id))))
  ORDER BY q.next_attempt_at
  LIMIT ${limit} -- a literal: the planner sizes the plan for it, also in the cached generic plan
  FOR UPDATE SKIP LOCKED
), lost AS (
  INSERT INTO inbox_attempt_history (source, event_id, attempt, worker, started_at, finished_at, duration_ms, outcome, error)
  SELECT c.source, c.event_id, c.prev_attempts, c.prev_locked_by, coalesce(c.prev_claimed_at, now()), now(),
         (extract(epoch FROM now() - coalesce(c.prev_claimed_at, now())) * 1000)::int, 'lost', $lost_error
  FROM candidates c
  WHERE c.prev_locked_by IS NOT NULL
)
UPDATE inbox_queue q
SET attempts = q.attempts + 1, locked_by = $token, claimed_at = now(), locked_until = now() + $lease_ms * interval '1 millisecond'
FROM candidates c
  -- One primary-key lookup per claimed row, whatever the statistics say: LIMIT keeps the planner
  -- from turning this into a hash join over the whole table.
  CROSS JOIN LATERAL (
    SELECT d.resource_id, d.event_type, d.occurred_at, d.received_at, d.body, d.content_type, d.headers, d.ctid AS record_ctid
    FROM inbox_deliveries d
    WHERE d.source = c.source AND d.event_id = c.event_id
    LIMIT 1
  ) d
-- One TID scan of the whole array, hash-joined to the candidates: a TID scan repeated per candidate
-- (a nested loop) asks the kernel for the table's size on every repetition.
WHERE q.ctid = ANY (ARRAY(SELECT row_ctid FROM candidates)) AND q.ctid = c.row_ctid
RETURNING q.source, q.event_id, d.resource_id, d.event_type, date_part('epoch', d.occurred_at) * 1000 AS occurred_ms,
          date_part('epoch', d.received_at) * 1000 AS received_ms, d.body, d.content_type, d.headers,
          q.attempts, q.guard_bypass, c.prev_locked_by IS NOT NULL AS was_lost, q.ctid::text AS row_ref,
          d.record_ctid::text AS record_ref`;
}

export type ClaimParams = { lease_ms: number; token: string; lost_error: string };

/** A claimed delivery as the statement answers it: times as epoch milliseconds (float8), cheaper to print and read than timestamp text. */
export interface InboxClaimRow {
  source: string;
  event_id: string;
  resource_id: string | null;
  event_type: string | null;
  occurred_ms: number | null;
  received_ms: number;
  body: Buffer | Uint8Array;
  content_type: string | null;
  headers: Record<string, string>;
  /** Counting this attempt. */
  attempts: number;
  guard_bypass: boolean;
  /** The previous holder's lease had expired: that attempt was lost (recorded by the claim). */
  was_lost: boolean;
  /** Where the claimed queue row version is: the completion finds it without an index lookup. */
  row_ref: string;
  /** Where the delivery record is (its ctid), for the same reason. */
  record_ref: string;
}

const byLimit = new Map<number, Statement<ClaimParams, InboxClaimRow>>();

/**
 * The claim statement for a batch size: the one builder of this file. The limit is a literal in the
 * text (see above), so each size is its own prepared statement, named after it.
 */
export function claimStatement(limit: number): Statement<ClaimParams, InboxClaimRow> {
  let stmt = byLimit.get(limit);
  if (!stmt) {
    // Its best plan depends on the queue's size (QueryOptions.sizeDependentPlan).
    stmt = defineStatement<ClaimParams, InboxClaimRow>(`tekil_claim_due_deliveries_${limit}`, claimText(limit), 'prepared-replanned');
    byLimit.set(limit, stmt);
  }
  return stmt;
}

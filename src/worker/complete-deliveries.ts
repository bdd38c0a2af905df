import { TekilError } from '../errors.js';
import type { Queryable } from '../store/db.js';

export type DeliveryStatus = 'pending' | 'done' | 'stale' | 'dead';
/** `lost` attempts are recorded by the claim that takes an expired lease back. */
export type AttemptOutcome = 'done' | 'retry' | 'dead' | 'stale';

/** How one attempt ended, and what the delivery becomes. */
export interface Completion {
  source: string;
  event_id: string;
  /** The claimed row version's ctid, from the claim. */
  row_ref: string;
  status: DeliveryStatus;
  outcome: AttemptOutcome;
  attempt: number;
  /** When the attempt started, epoch milliseconds. */
  started_ms: number;
  duration_ms: number;
  /** Sanitized summary; no body, no secrets. */
  error: string | null;
  /** For `pending`: when to try again, epoch milliseconds. */
  next_attempt_ms: number | null;
  result_ref: string | null;
}

/**
 * Writes a whole batch's outcomes in one statement: the delivery rows and one `inbox_attempts` row
 * each. Rows travel as one JSON array so both adapters bind the same single parameter (encoding it
 * is native, cheaper than array literals); times travel as epoch milliseconds, which the server
 * reads without parsing a timestamp text.
 *
 * Rows are found by the ctid the claim returned (no index lookup); a row changed since then is not
 * found, like a row no longer held by this batch (`locked_by` = its token), and neither is written. A row whose
 * lease ran out and that another worker claimed meanwhile is not: the caller then rolls the whole
 * batch back, handler writes included, so that delivery's effect is the other worker's alone.
 * The attempts are inserted from the update's own RETURNING (no join), so only rows written get one.
 */
const COMPLETE_SQL = `
WITH r AS (
  SELECT * FROM json_to_recordset($1::json) AS r(
    source text, event_id text, row_ref tid, status text, outcome text, attempt int, started_ms float8,
    duration_ms int, error text, next_attempt_ms float8, result_ref text)
), updated AS (
  UPDATE inbox_deliveries d
  SET status = r.status,
      next_attempt_at = coalesce(to_timestamp(r.next_attempt_ms / 1000), d.next_attempt_at),
      last_error = CASE WHEN r.outcome = 'done' THEN d.last_error ELSE r.error END,
      processed_at = CASE WHEN r.status IN ('done', 'stale') THEN now() ELSE d.processed_at END,
      result_ref = coalesce(r.result_ref, d.result_ref),
      locked_until = NULL, locked_by = NULL, guard_bypass = false
  FROM r
  WHERE d.ctid = r.row_ref AND d.source = r.source AND d.event_id = r.event_id
    AND d.status = 'pending' AND d.locked_by = $3
  RETURNING r.source, r.event_id, r.attempt, r.started_ms, r.duration_ms, r.outcome, r.error
)
INSERT INTO inbox_attempts (source, event_id, attempt, worker, started_at, finished_at, duration_ms, outcome, error)
SELECT u.source, u.event_id, u.attempt, $2, to_timestamp(u.started_ms / 1000), to_timestamp((u.started_ms + u.duration_ms) / 1000),
       u.duration_ms, u.outcome, u.error
FROM updated u`;

/** `token`: the batch's claim token; only rows it still holds are written. */
export async function completeDeliveries(tx: Queryable, completions: readonly Completion[], worker: string, token: string): Promise<void> {
  if (completions.length === 0) return;
  const res = await tx.query(COMPLETE_SQL, [JSON.stringify(completions), worker, token]);
  if (res.rowCount !== completions.length) {
    throw new TekilError('LEASE_LOST', `${completions.length - res.rowCount} of ${completions.length} deliveries of this batch were taken back after their lease expired; the batch is rolled back`);
  }
}

import { TekilError } from '../errors.js';
import type { Queryable } from '../store/db.js';

/** `release`: the delivery was not started; it returns to the queue as it was before the claim. */
export type DeliveryStatus = 'pending' | 'done' | 'stale' | 'dead' | 'release';

/** How one attempt ended, and what the delivery becomes. */
export interface Completion {
  /** The claimed queue row's ctid, from the claim. */
  row_ref: string;
  /** The delivery record's ctid, from the claim. */
  record_ref: string;
  /** What the delivery becomes; the attempt's outcome follows (pending: retry). */
  status: DeliveryStatus;
  /** When the attempt started, epoch milliseconds. */
  started_ms: number;
  duration_ms: number;
  /** Sanitized summary; no body, no secrets. */
  error: string | null;
  /** Kept as the record's last_error when this attempt succeeds (the previous attempt was lost). */
  prior_error: string | null;
  /** For `pending`: when to try again, epoch milliseconds. */
  next_attempt_ms: number | null;
  result_ref: string | null;
}

/**
 * Writes a whole batch's outcomes in one statement: the queue rows and the delivery records. The
 * outcomes travel as one array per field (one unnest, the cheapest form for the server to read; a
 * JSON array of objects costs it several times more). Times travel as epoch milliseconds.
 *
 * A settled delivery (done, stale) leaves the queue: a DELETE, which writes no index entry. A retry
 * or a dead one stays, unleased. The delivery record takes the outcome as a HOT update (none of the
 * columns written is indexed), and the attempt that settles a delivery is kept on it (final_*);
 * only a retried attempt becomes a row of inbox_attempt_history.
 *
 * Rows are found by the ctids the claim returned, each table in ONE TID scan of an array (one per
 * kind of outcome), matched to the outcomes by a hash join. A TID scan repeated per row, the nested
 * loop a planner would otherwise pick, asks the kernel for the table's size on every repetition
 * (an lseek each, a fifth of the whole statement's time), hence `enable_nestloop = off` for this
 * statement (see completeDeliveries).
 *
 * A queue row still holding this batch's token (`locked_by`) at its ctid is this batch's claim; the
 * source, event id and attempt number are read from it. A queue row changed since the claim is not
 * found, like one no longer held by this batch, and neither is written; its record is not written
 * either. A row whose lease ran out and that another worker claimed meanwhile is not: the caller then
 * rolls the whole batch back, handler writes included, so that delivery's effect is the other
 * worker's alone.
 */
const COMPLETE_SQL = `
WITH r AS (
  SELECT * FROM unnest($1::tid[], $2::tid[], $3::text[], $4::float8[], $5::int[], $6::text[], $7::text[], $8::float8[], $9::text[])
    AS r(row_ref, record_ref, status, started_ms, duration_ms, error, prior_error, next_attempt_ms, result_ref)
), settled AS (
  DELETE FROM inbox_queue q
  USING r
  WHERE q.ctid = ANY ($10::tid[]) AND q.ctid = r.row_ref AND q.locked_by = $15
  RETURNING q.source, q.event_id, q.attempts, r.*
), kept AS (
  UPDATE inbox_queue q
  SET dead = r.status = 'dead',
      next_attempt_at = coalesce(to_timestamp(r.next_attempt_ms / 1000), q.next_attempt_at),
      locked_until = NULL, locked_by = NULL, guard_bypass = false
  FROM r
  WHERE q.ctid = ANY ($11::tid[]) AND q.ctid = r.row_ref AND q.locked_by = $15
  RETURNING q.source, q.event_id, q.attempts, r.*
), released AS (
  -- Not started: the lease and the claim's attempt are given back; the record is not touched.
  UPDATE inbox_queue q
  SET attempts = q.attempts - 1, locked_until = NULL, locked_by = NULL, claimed_at = NULL
  WHERE q.ctid = ANY ($12::tid[]) AND q.locked_by = $15
  RETURNING 1
), written AS (
  SELECT * FROM settled UNION ALL SELECT * FROM kept
), retried AS (
  INSERT INTO inbox_attempt_history (source, event_id, attempt, worker, started_at, finished_at, duration_ms, outcome, error)
  SELECT w.source, w.event_id, w.attempts, $14, to_timestamp(w.started_ms / 1000), to_timestamp((w.started_ms + w.duration_ms) / 1000),
         w.duration_ms, 'retry', w.error
  FROM written w
  WHERE w.status = 'pending'
), recorded AS (
  UPDATE inbox_deliveries d
  SET status = w.status,
      attempts = w.attempts,
      last_attempt_at = to_timestamp(w.started_ms / 1000),
      last_error = CASE WHEN w.status = 'done' THEN coalesce(w.prior_error, d.last_error) ELSE w.error END,
      processed_at = CASE WHEN w.status IN ('done', 'stale') THEN now() ELSE d.processed_at END,
      result_ref = coalesce(w.result_ref, d.result_ref),
      final_outcome = CASE WHEN w.status = 'pending' THEN NULL ELSE w.status END,
      final_worker = CASE WHEN w.status = 'pending' THEN NULL ELSE $14 END,
      final_duration_ms = CASE WHEN w.status = 'pending' THEN NULL ELSE w.duration_ms END
  FROM written w
  WHERE d.ctid = ANY ($13::tid[]) AND d.ctid = w.record_ref AND d.source = w.source AND d.event_id = w.event_id
  RETURNING 1
)
SELECT ((SELECT count(*) FROM recorded) + (SELECT count(*) FROM released))::int AS written`;

/** `token`: the batch's claim token; only rows it still holds are written. */
export async function completeDeliveries(tx: Queryable, completions: readonly Completion[], worker: string, token: string): Promise<void> {
  const n = completions.length;
  if (n === 0) return;
  const rowRefs = new Array<string>(n);
  const recordRefs = new Array<string>(n);
  const statuses = new Array<string>(n);
  const started = new Array<number>(n);
  const durations = new Array<number>(n);
  const errors = new Array<string | null>(n);
  const priorErrors = new Array<string | null>(n);
  const nextAttempts = new Array<number | null>(n);
  const resultRefs = new Array<string | null>(n);
  const settledRefs: string[] = [];
  const keptRefs: string[] = [];
  const releasedRefs: string[] = [];
  const writtenRecordRefs: string[] = [];
  for (let i = 0; i < n; i++) {
    const c = completions[i]!;
    rowRefs[i] = c.row_ref;
    recordRefs[i] = c.record_ref;
    statuses[i] = c.status;
    started[i] = c.started_ms;
    durations[i] = c.duration_ms;
    errors[i] = c.error;
    priorErrors[i] = c.prior_error;
    nextAttempts[i] = c.next_attempt_ms;
    resultRefs[i] = c.result_ref;
    if (c.status === 'release') {
      releasedRefs.push(c.row_ref);
      continue;
    }
    (c.status === 'done' || c.status === 'stale' ? settledRefs : keptRefs).push(c.row_ref);
    writtenRecordRefs.push(c.record_ref);
  }
  // Planner settings last until the commit, which follows at once: the handlers' own queries in this
  // transaction have already run with the defaults.
  await tx.query("SELECT set_config('enable_nestloop', 'off', true)");
  const res = await tx.query<{ written: number }>(
    COMPLETE_SQL,
    [
      tidArray(rowRefs),
      tidArray(recordRefs),
      statuses,
      started,
      durations,
      errors,
      priorErrors,
      nextAttempts,
      resultRefs,
      tidArray(settledRefs),
      tidArray(keptRefs),
      tidArray(releasedRefs),
      tidArray(writtenRecordRefs),
      worker,
      token,
    ],
    { name: 'tekil_complete_deliveries' },
  );
  const written = res.rows[0]!.written;
  if (written !== n) {
    throw new TekilError('LEASE_LOST', `${n - written} of ${n} deliveries of this batch were taken back after their lease expired (or changed meanwhile); the batch is rolled back`);
  }
}

/**
 * A tid[] literal from ctids as Postgres prints them ("(12,3)": digits, a comma, parentheses, never a
 * quote or backslash), joined in one go: the driver's generic array encoder escapes element by
 * element, which showed up in profiles at this size.
 */
function tidArray(refs: readonly string[]): string {
  return refs.length === 0 ? '{}' : `{"${refs.join('","')}"}`;
}

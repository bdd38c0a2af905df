import { defineStatement, type NoParams } from '../statement.js';

/** One array per outcome field, in the same order (one unnest), then the ctid lists per kind of outcome. */
export type CompleteParams = {
  row_refs: string;
  record_refs: string;
  statuses: string[];
  started_ms: number[];
  durations_ms: number[];
  errors: Array<string | null>;
  prior_errors: Array<string | null>;
  next_attempts_ms: Array<number | null>;
  result_refs: Array<string | null>;
  /** done and stale: their queue rows are deleted. */
  settled_refs: string;
  /** retried and dead: their queue rows stay, unleased. */
  kept_refs: string;
  /** not started: lease and attempt given back. */
  released_refs: string;
  /** the records of every outcome but release. */
  written_record_refs: string;
  worker: string;
  /** The batch's claim token: only rows it still holds are written. */
  token: string;
};

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
 * statement (nestloopOff, sent just before it).
 *
 * A queue row still holding this batch's token (`locked_by`) at its ctid is this batch's claim; the
 * source, event id and attempt number are read from it. A queue row changed since the claim is not
 * found, like one no longer held by this batch, and neither is written; its record is not written
 * either. A row whose lease ran out and that another worker claimed meanwhile is not: the caller then
 * rolls the whole batch back, handler writes included, so that delivery's effect is the other
 * worker's alone.
 */
export const completeDeliveriesStatement = defineStatement<CompleteParams, { written: number }>(
  'tekil_complete_deliveries',
  `
WITH r AS (
  SELECT * FROM unnest($row_refs::tid[], $record_refs::tid[], $statuses::text[], $started_ms::float8[], $durations_ms::int[], $errors::text[], $prior_errors::text[], $next_attempts_ms::float8[], $result_refs::text[])
    AS r(row_ref, record_ref, status, started_ms, duration_ms, error, prior_error, next_attempt_ms, result_ref)
), settled AS (
  DELETE FROM inbox_queue q
  USING r
  WHERE q.ctid = ANY ($settled_refs::tid[]) AND q.ctid = r.row_ref AND q.locked_by = $token
  RETURNING q.source, q.event_id, q.attempts, r.*
), kept AS (
  UPDATE inbox_queue q
  SET dead = r.status = 'dead',
      next_attempt_at = coalesce(to_timestamp(r.next_attempt_ms / 1000), q.next_attempt_at),
      locked_until = NULL, locked_by = NULL, guard_bypass = false
  FROM r
  WHERE q.ctid = ANY ($kept_refs::tid[]) AND q.ctid = r.row_ref AND q.locked_by = $token
  RETURNING q.source, q.event_id, q.attempts, r.*
), released AS (
  -- Not started: the lease and the claim's attempt are given back; the record is not touched.
  UPDATE inbox_queue q
  SET attempts = q.attempts - 1, locked_until = NULL, locked_by = NULL, claimed_at = NULL
  WHERE q.ctid = ANY ($released_refs::tid[]) AND q.locked_by = $token
  RETURNING 1
), written AS (
  SELECT * FROM settled UNION ALL SELECT * FROM kept
), retried AS (
  INSERT INTO inbox_attempt_history (source, event_id, attempt, worker, started_at, finished_at, duration_ms, outcome, error)
  SELECT w.source, w.event_id, w.attempts, $worker, to_timestamp(w.started_ms / 1000), to_timestamp((w.started_ms + w.duration_ms) / 1000),
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
      final_worker = CASE WHEN w.status = 'pending' THEN NULL ELSE $worker END,
      final_duration_ms = CASE WHEN w.status = 'pending' THEN NULL ELSE w.duration_ms END
  FROM written w
  WHERE d.ctid = ANY ($written_record_refs::tid[]) AND d.ctid = w.record_ref AND d.source = w.source AND d.event_id = w.event_id
  RETURNING 1
)
SELECT ((SELECT count(*) FROM recorded) + (SELECT count(*) FROM released))::int AS written`,
  'prepared',
);

/**
 * Planner settings for the completion, local to the batch transaction. They last until the commit,
 * which follows at once: the handlers' own queries have already run with the defaults.
 */
export const nestloopOff = defineStatement<NoParams, never>('tekil_nestloop_off', "SELECT set_config('enable_nestloop', 'off', true)");

import { defineStatement } from '../statement.js';

/**
 * Writes a batch of finished attempts in one statement: every attempt row, and the delivery's new state
 * (its record, and its queue row: migration 013) only where this dispatcher still holds the lease (a
 * replay or a lease takeover meanwhile wins).
 */
export interface CompleteAttemptsParams extends Record<string, unknown> {
  ids: number[];
  leases: string[];
  nexts: string[];
  delays_ms: number[];
  status_codes: Array<number | null>;
  errors: Array<string | null>;
  message_ids: string[];
  endpoint_ids: string[];
  attempts: number[];
  urls: string[];
  started_ms: number[];
  durations_ms: number[];
  succeeded: boolean[];
  response_bodies: Array<string | null>;
  dispatcher: string;
  streak_endpoint_ids: string[];
  streak_resets: boolean[];
  streak_failures: number[];
  disable_after: number;
  /** The circuit breaker's streak (migration 018): failed attempts after the group's last success, and the next probe's delay. */
  streak_attempt_resets: boolean[];
  streak_attempt_failures: number[];
  streak_probe_delays_ms: number[];
  breaker_failures: number;
}

export const completeAttempts = defineStatement<CompleteAttemptsParams, never>(
  'tekil_outbox_complete',
  `
WITH r AS (
  SELECT * FROM unnest($ids::bigint[], $leases::text[], $nexts::text[], $delays_ms::double precision[], $status_codes::int[], $errors::text[])
    AS r (id, lease, next, delay_ms, status_code, error)
), upd AS (
  UPDATE outbox_deliveries d
  SET status = r.next,
      next_attempt_at = CASE WHEN r.next = 'pending' THEN now() + r.delay_ms * interval '1 millisecond' ELSE d.next_attempt_at END,
      completed_at = CASE WHEN r.next = 'pending' THEN NULL ELSE now() END,
      last_status_code = r.status_code, last_error = r.error, lease = NULL
  -- The lease is set only together with status 'sending' and cleared by every change away from it, so
  -- it alone proves the row is still this attempt's.
  FROM r WHERE d.id = r.id AND d.lease = r.lease
  RETURNING d.id, r.next, d.next_attempt_at
), settled AS (
  -- Off the queue once settled (a DELETE writes no index entry); a retry is due again later, and a
  -- failed delivery stays, parked, for the failed list and the bulk replay.
  DELETE FROM outbox_queue q USING upd WHERE q.delivery_id = upd.id AND upd.next = 'succeeded'
), requeued AS (
  UPDATE outbox_queue q SET next_attempt_at = upd.next_attempt_at, lease_until = NULL, failed = upd.next = 'failed'
  FROM upd WHERE q.delivery_id = upd.id AND upd.next <> 'succeeded'
), streak AS (
  -- Endpoint failure streaks: reset on success, counted per failed delivery, and the optional disable policy.
  UPDATE endpoints e
  SET consecutive_failures = CASE WHEN x.reset THEN 0 ELSE e.consecutive_failures END + x.failed,
      enabled = CASE WHEN $disable_after::int > 0 AND (CASE WHEN x.reset THEN 0 ELSE e.consecutive_failures END + x.failed) >= $disable_after::int
        THEN false ELSE e.enabled END,
      disabled_reason = CASE WHEN $disable_after::int > 0 AND (CASE WHEN x.reset THEN 0 ELSE e.consecutive_failures END + x.failed) >= $disable_after::int
        THEN 'disabled after ' || $disable_after::int || ' consecutive failed deliveries' ELSE e.disabled_reason END,
      -- The breaker: open (a probe time set) while the attempt streak is at its threshold, closed by a success.
      failed_attempts_in_row = CASE WHEN x.attempt_reset THEN 0 ELSE e.failed_attempts_in_row END + x.attempt_failed,
      probe_at = CASE WHEN $breaker_failures::int > 0 AND (CASE WHEN x.attempt_reset THEN 0 ELSE e.failed_attempts_in_row END + x.attempt_failed) >= $breaker_failures::int
        THEN now() + x.probe_delay_ms * interval '1 millisecond' END
  FROM unnest($streak_endpoint_ids::text[], $streak_resets::boolean[], $streak_failures::int[],
    $streak_attempt_resets::boolean[], $streak_attempt_failures::int[], $streak_probe_delays_ms::double precision[])
    AS x (id, reset, failed, attempt_reset, attempt_failed, probe_delay_ms)
  WHERE e.id = x.id AND (x.failed > 0 OR e.consecutive_failures > 0 OR x.attempt_failed > 0 OR e.failed_attempts_in_row > 0)
)
INSERT INTO outbox_attempts (delivery_id, message_id, endpoint_id, attempt, url, started_at, duration_ms, succeeded,
  status_code, error, response_body, dispatcher)
SELECT a.id, a.message_id, a.endpoint_id, a.attempt, a.url, to_timestamp(a.started_ms / 1000), a.duration_ms, a.succeeded,
  a.status_code, a.error, a.response_body, $dispatcher::text
FROM unnest($ids::bigint[], $message_ids::text[], $endpoint_ids::text[], $attempts::int[], $urls::text[], $started_ms::double precision[], $durations_ms::int[],
  $succeeded::boolean[], $status_codes::int[], $errors::text[], $response_bodies::text[])
  AS a (id, message_id, endpoint_id, attempt, url, started_ms, duration_ms, succeeded, status_code, error, response_body)`,
  'prepared',
);

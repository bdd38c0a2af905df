import { defineStatement } from '../statement.js';

/**
 * Writes a batch of finished attempts in one statement: every attempt row, and the delivery's new state
 * (its record, and its queue row: migration 013) only where this dispatcher still holds the lease (a
 * replay or a lease takeover meanwhile wins).
 */
export interface CompleteAttemptsParams extends Record<string, unknown> {
  /** With ids, each delivery's key (migration 025), as its claim returned it. */
  tenant_ids: string[];
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
  /**
   * The completions that give their delivery up (`failed`), when they are announced: each becomes a
   * `message.attempts_exhausted` message to the tenant concerned, published by this same statement
   * (so only if the completion is written), with the event id given here. Empty on the hot path.
   */
  exhausted_ids: number[];
  exhausted_event_ids: string[];
  exhausted_message_ids: string[];
  exhausted_endpoint_ids: string[];
  exhausted_attempts: number[];
  exhausted_urls: string[];
  exhausted_status_codes: Array<number | null>;
  exhausted_errors: Array<string | null>;
}

export const completeAttempts = defineStatement<CompleteAttemptsParams, never>(
  'tekil_outbox_complete',
  `
WITH r AS (
  SELECT * FROM unnest($tenant_ids::text[], $ids::bigint[], $leases::text[], $nexts::text[], $delays_ms::double precision[], $status_codes::int[], $errors::text[])
    AS r (tenant_id, id, lease, next, delay_ms, status_code, error)
), upd AS (
  UPDATE outbox_deliveries d
  SET status = r.next,
      next_attempt_at = CASE WHEN r.next = 'pending' THEN now() + r.delay_ms * interval '1 millisecond' ELSE d.next_attempt_at END,
      completed_at = CASE WHEN r.next = 'pending' THEN NULL ELSE now() END,
      last_status_code = r.status_code, last_error = r.error, lease = NULL
  -- The lease is set only together with status 'sending' and cleared by every change away from it, so
  -- it alone proves the row is still this attempt's.
  FROM r WHERE d.tenant_id = r.tenant_id AND d.id = r.id AND d.lease = r.lease
  RETURNING d.tenant_id, d.id, r.next, d.next_attempt_at
), settled AS (
  -- Off the queue once settled (a DELETE writes no index entry); a retry is due again later, and a
  -- failed delivery stays, parked, for the failed list and the bulk replay.
  DELETE FROM outbox_queue q USING upd WHERE q.tenant_id = upd.tenant_id AND q.delivery_id = upd.id AND upd.next = 'succeeded'
), requeued AS (
  UPDATE outbox_queue q SET next_attempt_at = upd.next_attempt_at, lease_until = NULL, failed = upd.next = 'failed'
  FROM upd WHERE q.tenant_id = upd.tenant_id AND q.delivery_id = upd.id AND upd.next <> 'succeeded'
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
), finished AS (
  -- Each tenant's requests finished (migration 026): with its requests claimed, what it has in flight.
  -- Every attempt written counts, its lease still held or not: a taken-back attempt was not counted again
  -- when claimed. In tenant order, so two writers lock the rows in the same order.
  INSERT INTO outbox_tenant_done AS o (tenant_id, requests_done)
  SELECT x.tenant_id, count(*) FROM unnest($tenant_ids::text[]) AS x (tenant_id) GROUP BY x.tenant_id ORDER BY x.tenant_id
  ON CONFLICT (tenant_id) DO UPDATE SET requests_done = o.requests_done + excluded.requests_done
), exhausted AS (
  -- message.attempts_exhausted (docs/alerts.md), for a delivery this statement gave up (upd: the lease
  -- was still this attempt's), once per delivery (the idempotency key), to its message's tenant, if that
  -- tenant is not being deleted. Never about a message.attempts_exhausted itself, or one failing
  -- endpoint would announce its own announcements for ever. Published through tekil's own function, so
  -- it is signed, retried and kept like any message.
  -- (Its own arrays, not a join with r: r read twice would be materialized, and upd's plan lose sight
  -- of its size.)
  SELECT p.id FROM unnest($exhausted_ids::bigint[], $exhausted_event_ids::text[], $exhausted_message_ids::text[],
      $exhausted_endpoint_ids::text[], $exhausted_attempts::int[], $exhausted_urls::text[], $exhausted_status_codes::int[], $exhausted_errors::text[])
      AS x (id, event_id, message_id, endpoint_id, attempt, url, status_code, error)
    JOIN upd ON upd.id = x.id AND upd.next = 'failed'
    -- The message by its whole key (LIMIT: a lookup, never a join the planner could drive by tenant alone).
    CROSS JOIN LATERAL (
      SELECT m.tenant_id, m.id, m.event_type, m.resource_id FROM outbox_messages m
      WHERE m.tenant_id = upd.tenant_id AND m.id = x.message_id AND m.event_type <> 'message.attempts_exhausted' LIMIT 1
    ) m
    JOIN tenants t ON t.id = m.tenant_id AND t.deleted_at IS NULL
    CROSS JOIN LATERAL (SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at) w
    CROSS JOIN LATERAL tekil_outbox_publish(m.tenant_id, x.event_id, 'message.attempts_exhausted', m.resource_id,
      convert_to(json_build_object(
        'event_id', x.event_id, 'event_type', 'message.attempts_exhausted', 'type', 'message.attempts_exhausted',
        'occurred_at', w.at, 'timestamp', w.at, 'resource_id', m.resource_id,
        'data', json_build_object('delivery_id', x.id, 'message_id', m.id, 'event_type', m.event_type, 'resource_id', m.resource_id,
          'endpoint_id', x.endpoint_id, 'url', x.url, 'attempts', x.attempt, 'last_status_code', x.status_code, 'last_error', x.error)
      )::text, 'UTF8'),
      'tekil-attempts-exhausted:' || x.id, '{}'::text[], '{}'::text[]) AS p
)
INSERT INTO outbox_attempts (tenant_id, delivery_id, message_id, endpoint_id, attempt, url, started_at, duration_ms, succeeded,
  status_code, error, response_body, dispatcher)
SELECT a.tenant_id, a.id, a.message_id, a.endpoint_id, a.attempt, a.url, to_timestamp(a.started_ms / 1000), a.duration_ms, a.succeeded,
  a.status_code, a.error, a.response_body, $dispatcher::text
FROM unnest($tenant_ids::text[], $ids::bigint[], $message_ids::text[], $endpoint_ids::text[], $attempts::int[], $urls::text[], $started_ms::double precision[], $durations_ms::int[],
  $succeeded::boolean[], $status_codes::int[], $errors::text[], $response_bodies::text[])
  AS a (tenant_id, id, message_id, endpoint_id, attempt, url, started_ms, duration_ms, succeeded, status_code, error, response_body)
-- Referenced, so the announcements are made (a plain SELECT in WITH runs only as far as it is read);
-- one evaluation for the statement, over nothing when no delivery was given up.
WHERE (SELECT count(*) FROM exhausted) >= 0
  -- Not for a delivery deleted meanwhile (its tenant deleted while its request was out): an attempt
  -- of nothing would outlive every delete (one primary-key probe each).
  AND EXISTS (SELECT 1 FROM outbox_deliveries d WHERE d.tenant_id = a.tenant_id AND d.id = a.id)`,
  'prepared',
);

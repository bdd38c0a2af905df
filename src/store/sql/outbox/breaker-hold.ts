import { defineStatement } from '../statement.js';

/**
 * The circuit breaker's hold (docs/sending.md, "The circuit breaker"): while an endpoint's breaker
 * waits for its next probe (probe_at in the future), a delivery whose ladder time comes is not sent,
 * and not left waiting either: it passes that rung unsent and keeps its own schedule, or fails at the
 * time its last attempt was due. Two statements: the first takes the due rows (as a claim does: the
 * record's next_attempt_at moves past now and the queue row is leased, so no claim takes them
 * meanwhile), the dispatcher reads each one's ladder, the second writes where each goes.
 *
 * The claim walk is left as it was: an endpoint with an open breaker is claimed from once its probe_at
 * has come, one request at a time (the probe, the earliest due delivery). Only while the probe's time
 * has not come are due deliveries held here.
 */
export interface HeldRow {
  tenant_id: string;
  id: number;
  endpoint_id: string;
  /** Attempts made (really sent) and the ladder's base: attempts - ladder_base were on the current ladder. */
  attempts: number;
  ladder_base: number;
  ladder_json: string;
  /** When its attempt was due (epoch ms), and now, both on the database's clock. */
  due_ms: number;
  now_ms: number;
}

/** How long taken rows stay out of every claim before the second statement writes them (or, if this process dies, they are due again). */
const HOLD_LEASE = "interval '30 seconds'";

export const takeHeldDeliveries = defineStatement<{ breaker_failures: number; limit: number }, HeldRow>(
  'tekil_outbox_breaker_take_held',
  `
WITH open AS (
  -- Only endpoints whose breaker is open (the partial index endpoints_breaker_open) and whose next probe is later.
  SELECT e.id, e.ladder::text AS ladder_json FROM endpoints e
  WHERE e.probe_at IS NOT NULL AND e.probe_at > now() AND e.failed_attempts_in_row >= $breaker_failures::int
    AND e.enabled AND e.deleted_at IS NULL
), due AS (
  SELECT q.tenant_id, q.delivery_id, open.id AS endpoint_id, open.ladder_json, q.next_attempt_at
  FROM open CROSS JOIN LATERAL (
    SELECT q.tenant_id, q.delivery_id, q.next_attempt_at FROM outbox_queue q
    WHERE q.endpoint_id = open.id AND NOT q.failed AND q.next_attempt_at <= now() AND (q.lease_until IS NULL OR q.lease_until <= now())
    ORDER BY q.next_attempt_at LIMIT $limit::int
  ) q
  LIMIT $limit::int
), taken AS (
  -- The record locked and tested again, as the claim does (a claim or a replay since this snapshot wins).
  UPDATE outbox_deliveries d SET next_attempt_at = now() + ${HOLD_LEASE}
  FROM due
  WHERE d.tenant_id = due.tenant_id AND d.id = due.delivery_id AND d.status = 'pending' AND d.next_attempt_at <= now()
  RETURNING d.tenant_id, d.id, d.attempts, d.ladder_base, due.endpoint_id, due.ladder_json, due.next_attempt_at
), leased AS (
  UPDATE outbox_queue q SET lease_until = now() + ${HOLD_LEASE} FROM taken WHERE q.tenant_id = taken.tenant_id AND q.delivery_id = taken.id
)
SELECT taken.tenant_id, taken.id, taken.endpoint_id, taken.attempts, taken.ladder_base, taken.ladder_json,
  (extract(epoch FROM taken.next_attempt_at) * 1000)::double precision AS due_ms, (extract(epoch FROM now()) * 1000)::double precision AS now_ms
FROM taken`,
);

/** Where each held delivery goes: `rungs` passed unsent, then pending until `next_ms`, or failed. */
export const writeHeldDeliveries = defineStatement<
  {
    tenant_ids: string[];
    ids: number[];
    rungs: number[];
    fail: boolean[];
    next_ms: number[];
    fail_error: string;
    /** Publish `message.attempts_exhausted` for each delivery failed here, with these event ids (one a row). */
    announce: boolean;
    event_ids: string[];
  },
  never
>(
  'tekil_outbox_breaker_write_held',
  `
WITH r AS (
  SELECT * FROM unnest($tenant_ids::text[], $ids::bigint[], $rungs::int[], $fail::boolean[], $next_ms::double precision[])
    AS r (tenant_id, id, rungs, fail, next_ms)
), upd AS (
  -- attempts counts what was sent; the rungs passed unsent move the ladder's base instead, so the next
  -- attempt takes the gap its place on the schedule gives it.
  UPDATE outbox_deliveries d SET
    ladder_base = d.ladder_base - r.rungs,
    status = CASE WHEN r.fail THEN 'failed' ELSE d.status END,
    completed_at = CASE WHEN r.fail THEN now() ELSE d.completed_at END,
    next_attempt_at = CASE WHEN r.fail THEN d.next_attempt_at ELSE to_timestamp(r.next_ms / 1000) END,
    last_error = CASE WHEN r.fail THEN $fail_error::text ELSE d.last_error END
  FROM r WHERE d.tenant_id = r.tenant_id AND d.id = r.id AND d.status = 'pending'
  RETURNING d.tenant_id, d.id, d.status, d.next_attempt_at, d.message_id, d.endpoint_id, d.url, d.attempts, d.last_status_code
), exhausted AS (
  -- message.attempts_exhausted for a delivery failed here, as the completion of a last attempt
  -- publishes it (src/store/sql/outbox/complete-attempts.ts): once per delivery, to its message's
  -- tenant if it is not being deleted, never about such an announcement itself.
  SELECT p.id FROM (SELECT * FROM upd WHERE $announce::boolean AND upd.status = 'failed') x
    JOIN unnest($tenant_ids::text[], $ids::bigint[], $event_ids::text[]) AS k (tenant_id, id, event_id) ON k.tenant_id = x.tenant_id AND k.id = x.id
    CROSS JOIN LATERAL (
      SELECT m.tenant_id, m.id, m.event_type, m.resource_id FROM outbox_messages m
      WHERE m.tenant_id = x.tenant_id AND m.id = x.message_id AND m.event_type <> 'message.attempts_exhausted' LIMIT 1
    ) m
    JOIN tenants t ON t.id = m.tenant_id AND t.deleted_at IS NULL
    JOIN endpoints e ON e.id = x.endpoint_id
    CROSS JOIN LATERAL (SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at) w
    CROSS JOIN LATERAL tekil_outbox_publish(m.tenant_id, k.event_id, 'message.attempts_exhausted', m.resource_id,
      convert_to(json_build_object(
        'event_id', k.event_id, 'event_type', 'message.attempts_exhausted', 'type', 'message.attempts_exhausted',
        'occurred_at', w.at, 'timestamp', w.at, 'resource_id', m.resource_id,
        'data', json_build_object('delivery_id', x.id, 'message_id', m.id, 'event_type', m.event_type, 'resource_id', m.resource_id,
          'endpoint_id', x.endpoint_id, 'url', coalesce(x.url, e.url), 'attempts', x.attempts, 'last_status_code', x.last_status_code,
          'last_error', $fail_error::text)
      )::text, 'UTF8'),
      'tekil-attempts-exhausted:' || x.id, '{}'::text[], '{}'::text[]) AS p
)
UPDATE outbox_queue q SET next_attempt_at = upd.next_attempt_at, failed = upd.status = 'failed', lease_until = NULL
FROM upd WHERE q.tenant_id = upd.tenant_id AND q.delivery_id = upd.id
  -- Referenced, so the announcements are made; one evaluation, over nothing when none is failed.
  AND (SELECT count(*) FROM exhausted) >= 0`,
);

import type { Queryable } from '../../store/db.js';

/** One finished attempt and what happens to its delivery next. */
export interface Completion {
  deliveryId: number;
  lease: string;
  messageId: string;
  endpointId: string;
  attempt: number;
  url: string;
  startedAt: Date;
  durationMs: number;
  succeeded: boolean;
  statusCode: number | null;
  error: string | null;
  responseBody: string | null;
  /** True when the endpoint had a failure streak at claim time, which a success must reset. */
  endpointHadFailures: boolean;
  /** The delivery's new status: `pending` again (with delayMs), `succeeded` or `failed`. */
  next: 'pending' | 'succeeded' | 'failed';
  delayMs: number;
}

/**
 * Writes a batch of finished attempts in one statement: every attempt row, and the delivery's new state
 * only where this dispatcher still holds the lease (a replay or a lease takeover meanwhile wins).
 */
const COMPLETE_SQL = `
WITH r AS (
  SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::double precision[], $5::int[], $6::text[])
    AS r (id, lease, next, delay_ms, status_code, error)
), upd AS (
  UPDATE outbox_deliveries d
  SET status = r.next,
      next_attempt_at = CASE WHEN r.next = 'pending' THEN now() + r.delay_ms * interval '1 millisecond' ELSE d.next_attempt_at END,
      completed_at = CASE WHEN r.next = 'pending' THEN NULL ELSE now() END,
      last_status_code = r.status_code, last_error = r.error, lease = NULL
  -- The lease is set only together with status 'sending' and cleared by every change away from it, so
  -- it alone proves the row is still this attempt's. (A status test here would let the planner read
  -- every in-flight row through the in-flight index instead of looking up just this batch's.)
  FROM r WHERE d.id = r.id AND d.lease = r.lease
  RETURNING d.id
), streak AS (
  -- Endpoint failure streaks: reset on success, counted per failed delivery, and the optional disable policy.
  UPDATE endpoints e
  SET consecutive_failures = CASE WHEN x.reset THEN 0 ELSE e.consecutive_failures END + x.failed,
      enabled = CASE WHEN $19::int > 0 AND (CASE WHEN x.reset THEN 0 ELSE e.consecutive_failures END + x.failed) >= $19::int
        THEN false ELSE e.enabled END,
      disabled_reason = CASE WHEN $19::int > 0 AND (CASE WHEN x.reset THEN 0 ELSE e.consecutive_failures END + x.failed) >= $19::int
        THEN 'disabled after ' || $19::int || ' consecutive failed deliveries' ELSE e.disabled_reason END
  FROM unnest($16::text[], $17::boolean[], $18::int[]) AS x (id, reset, failed)
  WHERE e.id = x.id AND (x.failed > 0 OR e.consecutive_failures > 0)
)
INSERT INTO outbox_attempts (delivery_id, message_id, endpoint_id, attempt, url, started_at, duration_ms, succeeded,
  status_code, error, response_body, dispatcher)
SELECT a.id, a.message_id, a.endpoint_id, a.attempt, a.url, to_timestamp(a.started_ms / 1000), a.duration_ms, a.succeeded,
  a.status_code, a.error, a.response_body, $15::text
FROM unnest($1::bigint[], $7::text[], $8::text[], $9::int[], $10::text[], $11::double precision[], $12::int[],
  $13::boolean[], $5::int[], $6::text[], $14::text[])
  AS a (id, message_id, endpoint_id, attempt, url, started_ms, duration_ms, succeeded, status_code, error, response_body)`;

export async function writeCompletions(db: Queryable, batch: readonly Completion[], dispatcher: string, disableAfter: number): Promise<void> {
  const streaks = new Map<string, { reset: boolean; failed: number }>();
  for (const c of batch) {
    if (c.next === 'pending' || (c.next === 'succeeded' && !c.endpointHadFailures)) continue;
    const s = streaks.get(c.endpointId) ?? { reset: false, failed: 0 };
    if (c.next === 'succeeded') s.reset = true;
    else s.failed++;
    streaks.set(c.endpointId, s);
  }
  const streakIds = [...streaks.keys()];
  await db.query(COMPLETE_SQL, [
    batch.map((c) => c.deliveryId),
    batch.map((c) => c.lease),
    batch.map((c) => c.next),
    batch.map((c) => c.delayMs),
    batch.map((c) => c.statusCode),
    batch.map((c) => c.error),
    batch.map((c) => c.messageId),
    batch.map((c) => c.endpointId),
    batch.map((c) => c.attempt),
    batch.map((c) => c.url),
    batch.map((c) => c.startedAt.getTime()),
    batch.map((c) => c.durationMs),
    batch.map((c) => c.succeeded),
    batch.map((c) => c.responseBody),
    dispatcher,
    streakIds,
    streakIds.map((id) => streaks.get(id)!.reset),
    streakIds.map((id) => streaks.get(id)!.failed),
    disableAfter,
  ]);
}

/** Records attempts a dispatcher started but never finished (it died): the lease ran out. */
export async function recordAbandoned(
  db: Queryable,
  rows: ReadonlyArray<{ id: number; message_id: string; endpoint_id: string; attempt: number; url: string; startedAt: Date }>,
): Promise<void> {
  if (rows.length === 0) return;
  await db.query(
    `INSERT INTO outbox_attempts (delivery_id, message_id, endpoint_id, attempt, url, started_at, duration_ms, succeeded, error)
     SELECT id, mid, eid, n, url, started, 0, false, 'dispatcher stopped during the attempt (lease expired); outcome unknown'
     FROM unnest($1::bigint[], $2::text[], $3::text[], $4::int[], $5::text[], $6::timestamptz[]) AS x (id, mid, eid, n, url, started)`,
    [rows.map((r) => r.id), rows.map((r) => r.message_id), rows.map((r) => r.endpoint_id), rows.map((r) => r.attempt), rows.map((r) => r.url), rows.map((r) => r.startedAt)],
  );
}

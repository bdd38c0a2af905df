import { defineStatement, type NoParams } from '../statement.js';

/**
 * What the alert rules look at, one small read each. Each takes the round's `now` (null: the
 * database's own clock, which is what a running evaluator passes), so a test can move time instead of
 * rewriting timestamps or waiting. None of them scans a large table: endpoints is
 * small, the dead part of inbox_queue has its own partial index, and the oldest due row of each queue
 * is the first entry of its due index.
 */

/**
 * Each live endpoint's attempts over the last `windowMs`: how many, how many succeeded, and the failed
 * ones since its last success in the window (the run of failures in a row it is on now). Reads the
 * window's part of outbox_attempts through its started_at index.
 */
export const endpointAttempts = defineStatement<
  { windowMs: number; now: Date | null },
  { id: string; tenant_id: string; url: string; enabled: boolean; attempts: number; succeeded: number; failing_in_a_row: number }
>(
  'tekil_alerts_endpoint_attempts',
  `SELECT e.id, e.tenant_id, e.url, e.enabled, a.attempts, a.succeeded, a.failing_in_a_row
   FROM (
     SELECT endpoint_id, count(*)::int AS attempts, count(*) FILTER (WHERE succeeded)::int AS succeeded,
            count(*) FILTER (WHERE NOT succeeded AND started_at > coalesce(ok_at, '-infinity'))::int AS failing_in_a_row
     FROM (SELECT endpoint_id, succeeded, started_at, max(started_at) FILTER (WHERE succeeded) OVER (PARTITION BY endpoint_id) AS ok_at
           FROM outbox_attempts WHERE started_at > coalesce($now::timestamptz, now()) - $windowMs * interval '1 millisecond') w
     GROUP BY endpoint_id
   ) a JOIN endpoints e ON e.id = a.endpoint_id AND e.deleted_at IS NULL`,
);

/** Whether the endpoint has had a successful attempt since `since` (an open incident's recovery). */
export const endpointSucceededSince = defineStatement<{ endpointId: string; since: Date }, { ok: boolean }>(
  'tekil_alerts_endpoint_succeeded_since',
  `SELECT EXISTS (SELECT 1 FROM outbox_attempts WHERE started_at > $since AND endpoint_id = $endpointId AND succeeded)
          OR NOT EXISTS (SELECT 1 FROM endpoints WHERE id = $endpointId AND deleted_at IS NULL) AS ok`,
);

/** The review queue's size per source. */
export const deadPerSource = defineStatement<NoParams, { source: string; dead: number }>(
  'tekil_alerts_dead_per_source',
  'SELECT source, count(*)::int AS dead FROM inbox_queue WHERE dead GROUP BY source',
);

/** Each source's latest completed reconcile run and how many findings it recorded. */
export const latestReconcileFindings = defineStatement<NoParams, { source: string; run_id: string; findings: number }>(
  'tekil_alerts_latest_reconcile_findings',
  `SELECT r.source, r.id::text AS run_id, (SELECT count(*)::int FROM reconcile_findings f WHERE f.run_id = r.id) AS findings
   FROM (SELECT DISTINCT ON (source) source, id FROM reconcile_runs WHERE status = 'completed' ORDER BY source, id DESC) r`,
);

/**
 * How long the oldest due delivery of an enabled endpoint has been waiting, in seconds (null when none
 * is due). Leased rows count too: a lease that runs out without an answer is no progress either.
 */
export const outboxOldestDue = defineStatement<{ now: Date | null }, { age_s: number | null }>(
  'tekil_alerts_outbox_oldest_due',
  `SELECT extract(epoch FROM coalesce($now::timestamptz, now()) - min(q.next_attempt_at))::float8 AS age_s
   FROM outbox_queue q JOIN endpoints e ON e.id = q.endpoint_id AND e.enabled AND e.deleted_at IS NULL
   WHERE NOT q.failed AND q.next_attempt_at <= coalesce($now::timestamptz, now()) AND (q.lease_until IS NULL OR q.lease_until < coalesce($now::timestamptz, now()))`,
);

/**
 * The same for the inbox: the oldest received delivery due for processing and not claimed. The queue's
 * due index leads with the source (migration 029): one probe for each source with queued rows (a loose
 * index scan), then its oldest unclaimed due row, in the index's order.
 */
export const inboxOldestDue = defineStatement<{ now: Date | null }, { age_s: number | null }>(
  'tekil_alerts_inbox_oldest_due',
  `WITH RECURSIVE sources (source) AS (
     (SELECT q.source FROM inbox_queue q WHERE NOT q.dead ORDER BY q.source LIMIT 1)
     UNION ALL
     SELECT (SELECT q.source FROM inbox_queue q WHERE NOT q.dead AND q.source > s.source ORDER BY q.source LIMIT 1)
     FROM sources s WHERE s.source IS NOT NULL
   )
   SELECT extract(epoch FROM coalesce($now::timestamptz, now()) - min(o.next_attempt_at))::float8 AS age_s
   FROM sources s CROSS JOIN LATERAL (
     SELECT q.next_attempt_at FROM inbox_queue q
     WHERE q.source = s.source AND NOT q.dead AND q.next_attempt_at <= coalesce($now::timestamptz, now()) AND (q.locked_until IS NULL OR q.locked_until < coalesce($now::timestamptz, now()))
     ORDER BY q.next_attempt_at LIMIT 1
   ) o
   WHERE s.source IS NOT NULL`,
);

/** The tenant an endpoint belongs to, unless it is being deleted: `endpoint.*` announcements go to it. */
export const endpointTenant = defineStatement<{ endpointId: string }, { tenant_id: string }>(
  'tekil_alerts_endpoint_tenant',
  `SELECT e.tenant_id FROM endpoints e JOIN tenants t ON t.id = e.tenant_id AND t.deleted_at IS NULL WHERE e.id = $endpointId`,
);

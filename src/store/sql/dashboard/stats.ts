import type { Queryable } from '../../db.js';
import { defineStatement, type NoParams } from '../statement.js';

/**
 * Statements behind the dashboard's stats. Each reads one time window; the callers bound the window
 * (at most a day) so a query never walks the whole history.
 */

export interface MinuteCount {
  minute: Date;
  kind: string;
  count: number;
}

/**
 * Per minute, deliveries received (accepted and stored) and settled (done, stale, dead). Settled ones
 * are found among those received at most `lookbackMs` before the window, through the received_at index:
 * a delivery settled in the window but received earlier than that (an old one replayed) is not counted.
 */
const inboxMinuteCountsStatement = defineStatement<{ since: Date; lookbackMs: number; source: string | null }, { minute: Date; kind: string; count: string }>(
  'dashboard_inbox_minute_counts',
  `SELECT date_trunc('minute', received_at) AS minute, 'received' AS kind, count(*) AS count
       FROM inbox_deliveries
      WHERE received_at >= $since AND ($source::text IS NULL OR source = $source)
      GROUP BY 1
     UNION ALL
     SELECT date_trunc('minute', coalesce(processed_at, last_attempt_at)) AS minute, status AS kind, count(*) AS count
       FROM inbox_deliveries
      WHERE received_at >= $since::timestamptz - $lookbackMs * interval '1 millisecond'
        AND status IN ('done', 'stale', 'dead')
        AND coalesce(processed_at, last_attempt_at) >= $since
        AND ($source::text IS NULL OR source = $source)
      GROUP BY 1, 2
     ORDER BY 1, 2`,
);

export async function inboxMinuteCounts(db: Queryable, since: Date, lookbackMs: number, source: string | null): Promise<MinuteCount[]> {
  const { rows } = await inboxMinuteCountsStatement.run(db, { since, lookbackMs, source });
  return rows.map((r) => ({ minute: r.minute, kind: r.kind, count: Number(r.count) }));
}

/** Dead deliveries waiting in the review queue (the partial index on dead rows answers this). */
const reviewQueueSizeStatement = defineStatement<NoParams, { n: string }>(
  'tekil_stats_review_queue',
  'SELECT count(*) AS n FROM inbox_queue WHERE dead',
  'prepared',
);

export async function reviewQueueSize(db: Queryable): Promise<number> {
  const { rows } = await reviewQueueSizeStatement.run(db);
  return Number(rows[0]?.n ?? 0);
}

/** Outbound deliveries whose ladder ran out: parked in the queue (its partial index on failed rows answers this). */
const failedOutboxDeliveriesStatement = defineStatement<NoParams, { n: string }>(
  'tekil_stats_outbox_failed',
  'SELECT count(*) AS n FROM outbox_queue WHERE failed',
  'prepared',
);

export async function failedOutboxDeliveries(db: Queryable): Promise<number> {
  const { rows } = await failedOutboxDeliveriesStatement.run(db);
  return Number(rows[0]?.n ?? 0);
}

export interface EndpointAttemptStats {
  endpoint_id: string;
  attempts: number;
  succeeded: number;
  p50_ms: number | null;
  p99_ms: number | null;
  last_attempt_at: Date | null;
  last_success_at: Date | null;
  /**
   * The start of the first failed attempt after the last successful one (both in the window); null
   * when the endpoint's latest attempt succeeded. With no success in the window it is the window's
   * first failure: the endpoint may have been failing for longer.
   */
  failing_since: Date | null;
}

/**
 * Per endpoint, the attempts started in the window: how many, how many succeeded, latency p50 and p99,
 * and since when it has been failing. Reads the window through the started_at index only.
 */
const endpointAttemptStatsStatement = defineStatement<
  { since: Date },
  {
    endpoint_id: string;
    attempts: string;
    succeeded: string;
    p50_ms: number | null;
    p99_ms: number | null;
    last_attempt_at: Date | null;
    last_success_at: Date | null;
    failing_since: Date | null;
  }
>(
  'dashboard_endpoint_attempt_stats',
  `WITH a AS (
       SELECT endpoint_id, started_at, duration_ms, succeeded,
              max(started_at) FILTER (WHERE succeeded) OVER (PARTITION BY endpoint_id) AS last_success_at
         FROM outbox_attempts
        WHERE started_at >= $since
     )
     SELECT endpoint_id, count(*) AS attempts, count(*) FILTER (WHERE succeeded) AS succeeded,
            percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms) AS p50_ms,
            percentile_cont(0.99) WITHIN GROUP (ORDER BY duration_ms) AS p99_ms,
            max(started_at) AS last_attempt_at,
            max(last_success_at) AS last_success_at,
            min(started_at) FILTER (WHERE NOT succeeded AND (last_success_at IS NULL OR started_at > last_success_at)) AS failing_since
       FROM a
      GROUP BY endpoint_id
      ORDER BY endpoint_id`,
);

export async function endpointAttemptStats(db: Queryable, since: Date): Promise<EndpointAttemptStats[]> {
  const { rows } = await endpointAttemptStatsStatement.run(db, { since });
  return rows.map((r) => ({
    ...r,
    attempts: Number(r.attempts),
    succeeded: Number(r.succeeded),
    p50_ms: r.p50_ms === null ? null : Number(r.p50_ms),
    p99_ms: r.p99_ms === null ? null : Number(r.p99_ms),
  }));
}

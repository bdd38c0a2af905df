import type { InboxFilter } from '../../../inbox/filter.js';

/**
 * The operator's statements on the inbox (list, show, replay, discard): not hot, so they share this
 * file. A delivery is its record (inbox_deliveries `d`) plus, while it is not settled, its queue row
 * (inbox_queue `q`): the lease, the next attempt and the attempt in flight live there. A leased
 * delivery is stored as pending; operators see it as processing.
 */
const STATUS = `CASE WHEN q.locked_until > now() THEN 'processing' ELSE d.status END`;
export const LIST_COLUMNS = `d.source, d.event_id, d.resource_id, d.event_type, ${STATUS} AS status, coalesce(q.attempts, d.attempts) AS attempts,
  d.occurred_at, d.received_at, CASE WHEN NOT q.dead THEN q.next_attempt_at END AS next_attempt_at,
  greatest(d.last_attempt_at, q.claimed_at) AS last_attempt_at, d.processed_at, d.last_error, d.result_ref`;
export const WITH_QUEUE = 'inbox_deliveries d LEFT JOIN inbox_queue q ON q.source = d.source AND q.event_id = d.event_id';
/** Pending, processing and dead deliveries all have a queue row: such lists start from the small queue. */
export const QUEUED_ONLY = 'inbox_queue q JOIN inbox_deliveries d ON d.source = q.source AND d.event_id = q.event_id';

/** The distinct sources of the inbox, by a skip scan of its primary key (one probe per source). */
const EVERY_SOURCE = `WITH RECURSIVE s AS (
    SELECT min(source) AS source FROM inbox_deliveries
    UNION ALL
    SELECT (SELECT min(source) FROM inbox_deliveries WHERE source > s.source) FROM s WHERE s.source IS NOT NULL
  ) SELECT source FROM s WHERE source IS NOT NULL`;

/** The conditions of a filter, its values appended to `params` (`$n` numbered after what is there). */
export function filterConditions(filter: InboxFilter, params: unknown[]): string[] {
  const where: string[] = [];
  const add = (sql: string, value: unknown) => {
    params.push(value);
    where.push(sql.replace('?', `$${params.length}`));
  };
  if (filter.status === 'processing') where.push('q.locked_until > now()');
  else if (filter.status === 'pending') where.push("d.status = 'pending' AND NOT q.dead AND (q.locked_until IS NULL OR q.locked_until <= now())");
  else if (filter.status === 'dead') where.push("q.dead AND d.status = 'dead'");
  else if (filter.status) add('d.status = ?', filter.status);
  if (filter.source) add('d.source = ?', filter.source);
  if (filter.type) add('d.event_type = ?', filter.type);
  if (filter.resourceId) add('d.resource_id = ?', filter.resourceId);
  if (filter.eventId) {
    add('d.event_id = ?', filter.eventId);
    // The primary key leads with the source: without one, each source (a handful, found by skipping
    // through that key) is looked up with the event id, instead of reading every record.
    if (!filter.source) where.push(`d.source IN (${EVERY_SOURCE})`);
  }
  if (filter.minAttempts !== undefined) add('coalesce(q.attempts, d.attempts) >= ?', filter.minAttempts);
  if (filter.since) add('d.received_at >= ?', filter.since);
  if (filter.until) add('d.received_at < ?', filter.until);
  return where;
}

/**
 * The list, newest first, keyset-paginated on (received_at, source, event_id) of the driving table
 * `k` (its index gives the order). The cursor's time travels as fixed ISO text with microseconds
 * (a JS Date would lose them, and the server's DateStyle must not change the format a cursor is
 * checked against).
 */
export function listSql(options: { from: string; k: 'q' | 'd'; where: string[]; limitParam: number }): string {
  const { from, k, where, limitParam } = options;
  return `SELECT ${LIST_COLUMNS}, to_char(d.received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS cursor_at
  FROM ${from} ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
  ORDER BY ${k}.received_at DESC, ${k}.source DESC, ${k}.event_id DESC LIMIT $${limitParam}`;
}

/** The keyset condition after a cursor, its three values at `$n - 2 … $n`. */
export function afterCursorCondition(k: 'q' | 'd', n: number): string {
  return `(${k}.received_at, ${k}.source, ${k}.event_id) < ($${n - 2}::timestamptz, $${n - 1}, $${n})`;
}

export const SHOW_DELIVERY_SQL = `SELECT ${LIST_COLUMNS}, d.content_type, d.headers, d.body, d.trimmed_at FROM ${WITH_QUEUE} WHERE d.source = $1 AND d.event_id = $2`;

export const DELIVERY_ATTEMPTS_SQL =
  'SELECT attempt, worker, started_at, finished_at, duration_ms, outcome, error FROM inbox_attempts WHERE source = $1 AND event_id = $2 ORDER BY id';

export const GET_ITEM_SQL = `SELECT ${LIST_COLUMNS}, d.trimmed_at FROM ${WITH_QUEUE} WHERE d.source = $1 AND d.event_id = $2`;

/**
 * Queues the deliveries `target` selects (a query answering d.* rows, locked FOR UPDATE): a dead one's
 * queue row is reset, the others get a new one. The attempt that had settled each delivery moves from
 * its record to inbox_attempt_history, making room for the next one. One statement, so a replay is
 * all or nothing.
 */
export function replaySql(target: string, forceParam: string): string {
  return `
WITH target AS (${target}),
archived AS (
  INSERT INTO inbox_attempt_history (source, event_id, attempt, worker, started_at, finished_at, duration_ms, outcome, error)
  SELECT t.source, t.event_id, t.attempts, t.final_worker, t.last_attempt_at,
         t.last_attempt_at + t.final_duration_ms * interval '1 millisecond', t.final_duration_ms, t.final_outcome,
         CASE WHEN t.final_outcome <> 'done' THEN t.last_error END
  FROM target t
  WHERE t.final_outcome IS NOT NULL
),
queued AS (
  INSERT INTO inbox_queue AS q (source, event_id, resource_id, provider_at, received_at, guard_bypass)
  SELECT t.source, t.event_id, t.resource_id, coalesce(t.occurred_at, t.received_at), t.received_at, ${forceParam}
  FROM target t
  ON CONFLICT (event_id, source) DO UPDATE
  SET dead = false, attempts = 0, next_attempt_at = now(), locked_until = NULL, locked_by = NULL, claimed_at = NULL,
      guard_bypass = excluded.guard_bypass
  RETURNING q.source, q.event_id, q.next_attempt_at
)
UPDATE inbox_deliveries d
SET status = 'pending', attempts = 0, final_outcome = NULL, final_worker = NULL, final_duration_ms = NULL
FROM queued t
WHERE d.source = t.source AND d.event_id = t.event_id
RETURNING d.source, d.event_id, d.resource_id, d.event_type, d.status, d.attempts, d.occurred_at, d.received_at,
          t.next_attempt_at, d.last_attempt_at, d.processed_at, d.last_error, d.result_ref`;
}

/** One delivery, replayable by status ($4) or done with force ($3), while it still has its body. */
export const REPLAY_ONE_SQL = replaySql(
  `SELECT d.* FROM inbox_deliveries d
   WHERE d.source = $1 AND d.event_id = $2 AND (d.status = ANY($4::text[]) OR ($3 AND d.status = 'done')) AND d.trimmed_at IS NULL
   FOR UPDATE`,
  '$3::boolean',
);

/**
 * Every delivery matching the conditions (`$1` is force) that still has its body. Dead deliveries are found through the
 * queue's review index, not by reading every record.
 */
export function replayMatchingSql(dead: boolean, where: string[]): string {
  // Settled deliveries have no queue row; the outer join is for a filter on attempts (coalesce(q.…, d.…)).
  const from = dead ? QUEUED_ONLY : WITH_QUEUE;
  // Trimmed deliveries have nothing left to run: a bulk replay passes over them.
  return replaySql(`SELECT d.* FROM ${from} WHERE ${[...where, 'd.trimmed_at IS NULL', ...(dead ? ['q.dead'] : [])].join(' AND ')} FOR UPDATE OF d`, '$1::boolean');
}

/**
 * Takes a delivery out of the queue for good. A leased delivery cannot be discarded: the DELETE
 * waits for a claim in progress and then sees its lease.
 */
export const DISCARD_SQL = `
WITH dequeued AS (
  DELETE FROM inbox_queue q
  WHERE q.source = $1 AND q.event_id = $2 AND (q.locked_until IS NULL OR q.locked_until <= now())
  RETURNING q.source, q.event_id
), target AS (
  SELECT source, event_id, true AS dequeued FROM dequeued
  UNION ALL
  SELECT d.source, d.event_id, false FROM inbox_deliveries d WHERE d.source = $1 AND d.event_id = $2 AND d.status = 'stale'
)
-- Each branch re-checks its own status: a stale delivery replayed meanwhile (pending again, with a
-- queue row this statement could not see) is not discarded behind its queue row's back.
UPDATE inbox_deliveries d SET status = 'discarded', processed_at = coalesce(d.processed_at, now())
FROM target t
WHERE d.source = t.source AND d.event_id = t.event_id
  AND (CASE WHEN t.dequeued THEN d.status IN ('dead', 'pending') ELSE d.status = 'stale' END)
RETURNING d.source`;

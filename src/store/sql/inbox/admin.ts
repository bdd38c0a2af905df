import { defineStatement } from '../statement.js';

/**
 * The operator's statements on the inbox (list, show, count, replay, discard): not hot, so they share
 * this file. A delivery is its record (inbox_deliveries `d`) plus, while it is not settled, its queue
 * row (inbox_queue `q`): the lease, the next attempt and the attempt in flight live there. A leased
 * delivery is stored as pending; operators see it as processing.
 */
const STATUS = `CASE WHEN q.locked_until > now() THEN 'processing' ELSE d.status END`;
const LIST_COLUMNS = `d.source, d.event_id, d.resource_id, d.event_type, ${STATUS} AS status, coalesce(q.attempts, d.attempts) AS attempts,
  d.occurred_at, d.received_at, CASE WHEN NOT q.dead THEN q.next_attempt_at END AS next_attempt_at,
  greatest(d.last_attempt_at, q.claimed_at) AS last_attempt_at, d.processed_at, d.last_error, d.result_ref, d.erased_at`;
const WITH_QUEUE = 'inbox_deliveries d LEFT JOIN inbox_queue q ON q.source = d.source AND q.event_id = d.event_id';
/** Pending, processing and dead deliveries all have a queue row: such lists start from the small queue. */
const QUEUED_ONLY = 'inbox_queue q JOIN inbox_deliveries d ON d.source = q.source AND d.event_id = q.event_id';

/** A delivery as an operator sees it in a list. */
export interface InboxListRow {
  source: string;
  event_id: string;
  resource_id: string | null;
  event_type: string | null;
  status: string;
  attempts: number;
  occurred_at: Date | null;
  received_at: Date;
  /** When the next attempt is due; null once settled, and while dead. */
  next_attempt_at: Date | null;
  last_attempt_at: Date | null;
  processed_at: Date | null;
  last_error: string | null;
  result_ref: string | null;
  /** When the body and headers were erased on request (docs/erasure.md); null unless erased. */
  erased_at: Date | null;
}

/** The distinct sources of the inbox, by a skip scan of its primary key (one probe per source). */
const EVERY_SOURCE = `WITH RECURSIVE s AS (
    SELECT min(source) AS source FROM inbox_deliveries
    UNION ALL
    SELECT (SELECT min(source) FROM inbox_deliveries WHERE source > s.source) FROM s WHERE s.source IS NOT NULL
  ) SELECT source FROM s WHERE source IS NOT NULL`;

/** An operator's filter, every field optional (null: not filtered). */
export interface InboxFilterParams extends Record<string, unknown> {
  /** An operator's status: `processing` is a pending delivery under a live lease. */
  status: string | null;
  source: string | null;
  type: string | null;
  resourceId: string | null;
  eventId: string | null;
  minAttempts: number | null;
  since: Date | null;
  until: Date | null;
}

/**
 * The filter's conditions, each one switched off by a null parameter. These statements are sent
 * unnamed, so Postgres plans each run with its values: a condition whose parameter is null folds away
 * to `true` before planning, and the plan is the one the remaining conditions alone would get (the
 * keyset order from the driving table's index, the resource index, the primary key).
 *
 * An event id without a source is the one filter that needs its own statement (`acrossSources`): the
 * primary key leads with the source, so each source (a handful, found by skipping through that key)
 * is looked up with the event id, instead of reading every record. That lookup is a sub-select, which
 * Postgres turns into a join only where it stands on its own, not inside a condition a parameter
 * switches off (it joins sub-selects before it folds parameters).
 */
const filter = (acrossSources: boolean) => `($status::text IS NULL
    OR ($status::text = 'processing' AND q.locked_until > now())
    OR ($status::text = 'pending' AND d.status = 'pending' AND NOT q.dead AND (q.locked_until IS NULL OR q.locked_until <= now()))
    OR ($status::text = 'dead' AND q.dead AND d.status = 'dead')
    OR ($status::text NOT IN ('processing', 'pending', 'dead') AND d.status = $status::text))
  AND ($source::text IS NULL OR d.source = $source::text)
  AND ($type::text IS NULL OR d.event_type = $type::text)
  AND ($resourceId::text IS NULL OR d.resource_id = $resourceId::text)
  AND ($eventId::text IS NULL OR d.event_id = $eventId::text)${
    acrossSources
      ? `
  AND d.source IN (${EVERY_SOURCE})`
      : ''
  }
  AND ($minAttempts::int IS NULL OR coalesce(q.attempts, d.attempts) >= $minAttempts::int)
  AND ($since::timestamptz IS NULL OR d.received_at >= $since::timestamptz)
  AND ($until::timestamptz IS NULL OR d.received_at < $until::timestamptz)`;

export interface InboxListParams extends InboxFilterParams {
  /** The keyset cursor: the last row's received time (ISO text with microseconds), source and id; all null on the first page. */
  afterReceivedAt: string | null;
  afterSource: string | null;
  afterEventId: string | null;
  limit: number;
}

/**
 * The list, newest first, keyset-paginated on (received_at, source, event_id) of the driving table
 * `k` (its index gives the order). The cursor's time travels as fixed ISO text with microseconds
 * (a JS Date would lose them, and the server's DateStyle must not change the format a cursor is
 * checked against).
 */
function listText(from: string, k: 'q' | 'd', acrossSources: boolean): string {
  return `SELECT ${LIST_COLUMNS}, to_char(d.received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS cursor_at
  FROM ${from}
  WHERE ${filter(acrossSources)}
    AND ($afterReceivedAt::timestamptz IS NULL
         OR (${k}.received_at, ${k}.source, ${k}.event_id) < ($afterReceivedAt::timestamptz, $afterSource::text, $afterEventId::text))
  ORDER BY ${k}.received_at DESC, ${k}.source DESC, ${k}.event_id DESC LIMIT $limit`;
}

type ListRow = InboxListRow & { cursor_at: string };

/**
 * Which of a family's fixed statements serves a filter: read from the queue for a status that always
 * has a queue row (pending, processing, dead), else from the records; and the variant that looks an
 * event id up in every source when the filter names an event id and no source.
 */
export interface FilterShape {
  queued: boolean;
  acrossSources: boolean;
}

function family<P extends Record<string, unknown>, R>(name: string, text: (from: string, k: 'q' | 'd', acrossSources: boolean) => string) {
  const make = (queued: boolean, acrossSources: boolean) =>
    defineStatement<P, R>(
      `${name}${queued ? '_queued' : ''}${acrossSources ? '_across_sources' : ''}`,
      text(queued ? QUEUED_ONLY : WITH_QUEUE, queued ? 'q' : 'd', acrossSources),
    );
  const all = [make(false, false), make(false, true), make(true, false), make(true, true)] as const;
  return (shape: FilterShape) => all[(shape.queued ? 2 : 0) + (shape.acrossSources ? 1 : 0)]!;
}

/** The list, newest first (see listText). */
export const listDeliveries = family<InboxListParams, ListRow>('inbox_list_deliveries', listText);

/** How many deliveries a filter matches now (a bulk job's dry run and total). */
export const countDeliveries = family<InboxFilterParams, { n: string }>(
  'inbox_count_deliveries',
  (from, _k, acrossSources) => `SELECT count(*) AS n FROM ${from} WHERE ${filter(acrossSources)}`,
);

export const showDelivery = defineStatement<
  { source: string; eventId: string },
  InboxListRow & { content_type: string | null; headers: Record<string, string>; body: Uint8Array; trimmed_at: Date | null }
>(
  'inbox_show_delivery',
  `SELECT ${LIST_COLUMNS}, d.content_type, d.headers, d.body, d.trimmed_at FROM ${WITH_QUEUE} WHERE d.source = $source AND d.event_id = $eventId`,
);

export interface InboxAttemptRow {
  attempt: number;
  worker: string | null;
  started_at: Date;
  finished_at: Date;
  duration_ms: number | null;
  outcome: string;
  error: string | null;
}

export const deliveryAttempts = defineStatement<{ source: string; eventId: string }, InboxAttemptRow>(
  'inbox_delivery_attempts',
  'SELECT attempt, worker, started_at, finished_at, duration_ms, outcome, error FROM inbox_attempts WHERE source = $source AND event_id = $eventId ORDER BY id',
);

export const getItem = defineStatement<{ source: string; eventId: string }, InboxListRow & { trimmed_at: Date | null }>(
  'inbox_get_item',
  `SELECT ${LIST_COLUMNS}, d.trimmed_at FROM ${WITH_QUEUE} WHERE d.source = $source AND d.event_id = $eventId`,
);

/**
 * Queues the deliveries `target` selects (a query answering d.* rows, locked FOR UPDATE): a dead one's
 * queue row is reset, the others get a new one. The attempt that had settled each delivery moves from
 * its record to inbox_attempt_history, making room for the next one. One statement, so a replay is
 * all or nothing. `$force` lets each past the ordering guard once. Used at load time only, to build
 * the fixed replay statements below (one delivery, and a bulk replay's page: src/inbox/bulk.ts).
 */
function replayText(target: string): string {
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
  SELECT t.source, t.event_id, t.resource_id, coalesce(t.occurred_at, t.received_at), t.received_at, $force::boolean
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

/** One delivery, replayable by status (`$replayable`) or done with force, while it still has its body. */
export const replayOne = defineStatement<{ source: string; eventId: string; force: boolean; replayable: string[] }, InboxListRow>(
  'inbox_replay_one',
  replayText(
    `SELECT d.* FROM inbox_deliveries d
   WHERE d.source = $source AND d.event_id = $eventId AND (d.status = ANY($replayable::text[]) OR ($force AND d.status = 'done')) AND d.trimmed_at IS NULL
   FOR UPDATE`,
  ),
);

/**
 * A page of deliveries at once (a bulk replay's, keys as two arrays), each under the same conditions as
 * replayOne; a delivery that fails them (changed since it was listed, or its body trimmed) is left as
 * it is and is not in the answer.
 */
export const replayMany = defineStatement<{ sources: string[]; eventIds: string[]; force: boolean; replayable: string[] }, InboxListRow>(
  'inbox_replay_many',
  replayText(
    `SELECT d.* FROM inbox_deliveries d JOIN unnest($sources::text[], $eventIds::text[]) AS k(source, event_id) ON d.source = k.source AND d.event_id = k.event_id
   WHERE (d.status = ANY($replayable::text[]) OR ($force AND d.status = 'done')) AND d.trimmed_at IS NULL
   FOR UPDATE OF d`,
  ),
);

/**
 * Takes a delivery out of the queue for good. A leased delivery cannot be discarded: the DELETE
 * waits for a claim in progress and then sees its lease.
 */
export const discard = defineStatement<{ source: string; eventId: string }, { source: string }>(
  'inbox_discard',
  `
WITH dequeued AS (
  DELETE FROM inbox_queue q
  WHERE q.source = $source AND q.event_id = $eventId AND (q.locked_until IS NULL OR q.locked_until <= now())
  RETURNING q.source, q.event_id
), target AS (
  SELECT source, event_id, true AS dequeued FROM dequeued
  UNION ALL
  SELECT d.source, d.event_id, false FROM inbox_deliveries d WHERE d.source = $source AND d.event_id = $eventId AND d.status = 'stale'
)
-- Each branch re-checks its own status: a stale delivery replayed meanwhile (pending again, with a
-- queue row this statement could not see) is not discarded behind its queue row's back.
UPDATE inbox_deliveries d SET status = 'discarded', processed_at = coalesce(d.processed_at, now())
FROM target t
WHERE d.source = t.source AND d.event_id = t.event_id
  AND (CASE WHEN t.dequeued THEN d.status IN ('dead', 'pending') ELSE d.status = 'stale' END)
RETURNING d.source`,
);

/**
 * Every delivery of one resource (of one source, or of every source when `$source` is null), in the
 * order the worker applies them: provider time (received time when the provider gives none), then
 * received time, then event id — the queue's own order (inbox_queue.provider_at). Found through the
 * inbox_deliveries_resource index; `$limit` caps the rows.
 */
export const resourceTimeline = defineStatement<{ resourceId: string; source: string | null; limit: number }, InboxListRow & { provider_at: Date }>(
  'inbox_resource_timeline',
  `SELECT ${LIST_COLUMNS}, coalesce(d.occurred_at, d.received_at) AS provider_at
  FROM ${WITH_QUEUE}
  WHERE d.resource_id = $resourceId AND ($source::text IS NULL OR d.source = $source)
  ORDER BY coalesce(d.occurred_at, d.received_at), d.received_at, d.event_id
  LIMIT $limit`,
);

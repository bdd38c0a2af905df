import { TekilError } from '../errors.js';
import type { Queryable } from '../store/db.js';
import { INBOX_CHANNEL } from './channel.js';

/** What an operator filters the inbox by (review queue = `status: 'dead'`). */
export interface InboxFilter {
  status?: string | undefined;
  source?: string | undefined;
  type?: string | undefined;
  resourceId?: string | undefined;
  /** received_at ≥ from */
  from?: Date | undefined;
  /** received_at < to */
  to?: Date | undefined;
}

export const inboxStatuses = ['pending', 'processing', 'done', 'stale', 'dead', 'discarded'] as const;

export interface InboxListItem {
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
}

/**
 * A delivery is its record (inbox_deliveries `d`) plus, while it is not settled, its queue row
 * (inbox_queue `q`): the lease, the next attempt and the attempt in flight live there. A leased
 * delivery is stored as pending; operators see it as processing.
 */
const STATUS = `CASE WHEN q.locked_until > now() THEN 'processing' ELSE d.status END`;
const LIST_COLUMNS = `d.source, d.event_id, d.resource_id, d.event_type, ${STATUS} AS status, coalesce(q.attempts, d.attempts) AS attempts,
  d.occurred_at, d.received_at, CASE WHEN NOT q.dead THEN q.next_attempt_at END AS next_attempt_at,
  greatest(d.last_attempt_at, q.claimed_at) AS last_attempt_at, d.processed_at, d.last_error, d.result_ref`;
const WITH_QUEUE = 'inbox_deliveries d LEFT JOIN inbox_queue q ON q.source = d.source AND q.event_id = d.event_id';
/** Pending, processing and dead deliveries all have a queue row: such lists start from the small queue. */
const QUEUED_ONLY = 'inbox_queue q JOIN inbox_deliveries d ON d.source = q.source AND d.event_id = q.event_id';

function whereClause(filter: InboxFilter, params: unknown[]): string[] {
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
  if (filter.from) add('d.received_at >= ?', filter.from);
  if (filter.to) add('d.received_at < ?', filter.to);
  return where;
}

function queuedOnly(status: string | undefined): boolean {
  return status === 'pending' || status === 'processing' || status === 'dead';
}

/** Newest first, keyset-paginated on (received_at, source, event_id): stable while rows arrive. */
export async function listInbox(db: Queryable, filter: InboxFilter, page: { limit: number; cursor?: string | undefined }): Promise<{ items: InboxListItem[]; next_cursor: string | null }> {
  const params: unknown[] = [];
  const where = whereClause(filter, params);
  // Sorting on the driving table's own columns lets its index give the order (same values in both).
  const [from, k] = queuedOnly(filter.status) ? [QUEUED_ONLY, 'q'] : [WITH_QUEUE, 'd'];
  if (page.cursor) {
    const c = decodeCursor(page.cursor);
    params.push(c.receivedAt, c.source, c.eventId);
    const n = params.length;
    where.push(`(${k}.received_at, ${k}.source, ${k}.event_id) < ($${n - 2}::timestamptz, $${n - 1}, $${n})`);
  }
  params.push(page.limit + 1);
  // received_at travels in the cursor as Postgres text: microseconds survive, a JS Date would not.
  const res = await db.query<InboxListItem & { cursor_at: string }>(
    `SELECT ${LIST_COLUMNS}, d.received_at::text AS cursor_at FROM ${from} ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
     ORDER BY ${k}.received_at DESC, ${k}.source DESC, ${k}.event_id DESC LIMIT $${params.length}`,
    params,
  );
  const rows = res.rows.slice(0, page.limit);
  const last = rows[rows.length - 1];
  const items = rows.map(({ cursor_at: _, ...item }) => item);
  return { items, next_cursor: res.rows.length > page.limit && last ? encodeCursor(last) : null };
}

function encodeCursor(row: InboxListItem & { cursor_at: string }): string {
  return Buffer.from(JSON.stringify([row.cursor_at, row.source, row.event_id])).toString('base64url');
}

function decodeCursor(cursor: string): { receivedAt: string; source: string; eventId: string } {
  try {
    const [receivedAt, source, eventId] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [string, string, string];
    if (typeof receivedAt !== 'string' || typeof source !== 'string' || typeof eventId !== 'string') throw new Error('bad shape');
    return { receivedAt, source, eventId };
  } catch (err) {
    throw new TekilError('VALIDATION_FAILED', 'invalid cursor', { cause: err });
  }
}

export interface InboxAttempt {
  attempt: number;
  worker: string | null;
  started_at: Date;
  finished_at: Date;
  duration_ms: number | null;
  outcome: string;
  error: string | null;
}

export interface InboxDetail extends InboxListItem {
  content_type: string | null;
  headers: Record<string, string>;
  /** The body as text when it is valid UTF-8, else base64 (see body_encoding). */
  body: string;
  body_encoding: 'utf8' | 'base64';
  attempt_history: InboxAttempt[];
}

export async function showDelivery(db: Queryable, source: string, eventId: string): Promise<InboxDetail> {
  const res = await db.query<InboxListItem & { content_type: string | null; headers: Record<string, string>; body: Uint8Array }>(
    `SELECT ${LIST_COLUMNS}, d.content_type, d.headers, d.body FROM ${WITH_QUEUE} WHERE d.source = $1 AND d.event_id = $2`,
    [source, eventId],
  );
  const row = res.rows[0];
  if (!row) throw new TekilError('NOT_FOUND', `no delivery ${source}/${eventId}`);
  const attempts = await db.query<InboxAttempt>(
    'SELECT attempt, worker, started_at, finished_at, duration_ms, outcome, error FROM inbox_attempts WHERE source = $1 AND event_id = $2 ORDER BY id',
    [source, eventId],
  );
  const bytes = Buffer.from(row.body);
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  const isUtf8 = Buffer.from(text, 'utf8').equals(bytes);
  return {
    ...row,
    body: isUtf8 ? text : bytes.toString('base64'),
    body_encoding: isUtf8 ? 'utf8' : 'base64',
    attempt_history: attempts.rows,
  };
}

/**
 * Puts deliveries back in the queue. `dead`, `stale` and `discarded` ones replay freely; a `done` one
 * only with `force` — its handler runs again, and effects made through `ctx.tx` are still not doubled
 * as long as the handler's writes are conditional (see the example app). `force` also lets the event
 * past the ordering guard once. Attempts restart from zero (the history keeps every earlier attempt).
 */
const REPLAYABLE = ['dead', 'stale', 'discarded'];

/**
 * Queues the deliveries `target` selects (a query answering d.* rows, locked FOR UPDATE): a dead one's
 * queue row is reset, the others get a new one. The attempt that had settled each delivery moves from
 * its record to inbox_attempt_history, making room for the next one. One statement, so a replay is
 * all or nothing.
 */
function replaySql(target: string, forceParam: string): string {
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

export async function replayDelivery(db: Queryable, source: string, eventId: string, force: boolean): Promise<InboxListItem> {
  // The answer is the state the replay wrote: a worker may claim the delivery the moment it commits.
  const res = await db.query<InboxListItem>(
    replaySql(
      `SELECT d.* FROM inbox_deliveries d
       WHERE d.source = $1 AND d.event_id = $2 AND (d.status = ANY($4::text[]) OR ($3 AND d.status = 'done'))
       FOR UPDATE`,
      '$3::boolean',
    ),
    [source, eventId, force, REPLAYABLE],
  );
  const row = res.rows[0];
  if (row) {
    await db.query(`SELECT pg_notify('${INBOX_CHANNEL}', '')`);
    return row;
  }
  const status = await currentStatus(db, source, eventId);
  if (status === 'done') throw new TekilError('CONFLICT', `${source}/${eventId} is done; replaying it needs force`);
  throw new TekilError('CONFLICT', `${source}/${eventId} is ${status}: already queued`);
}

/** Replays every delivery matching the filter (status defaults to dead). Answers how many. */
export async function replayMatching(db: Queryable, filter: InboxFilter, force: boolean): Promise<number> {
  const status = filter.status ?? 'dead';
  if (status === 'done' && !force) throw new TekilError('CONFLICT', 'replaying done deliveries needs force');
  if (!REPLAYABLE.includes(status) && status !== 'done') throw new TekilError('VALIDATION_FAILED', `cannot replay ${status} deliveries`);
  const params: unknown[] = [force];
  // Every replayable status is a settled one or dead: the record's own status says which.
  const where = whereClause({ ...filter, status: undefined }, params);
  params.push(status);
  where.push(`d.status = $${params.length}`);
  // Dead deliveries are found through the queue's review index, not by reading every record.
  const from = status === 'dead' ? `inbox_queue q JOIN inbox_deliveries d ON d.source = q.source AND d.event_id = q.event_id` : 'inbox_deliveries d';
  if (status === 'dead') where.push('q.dead');
  const res = await db.query(replaySql(`SELECT d.* FROM ${from} WHERE ${where.join(' AND ')} FOR UPDATE OF d`, '$1::boolean'), params);
  if (res.rowCount > 0) await db.query(`SELECT pg_notify('${INBOX_CHANNEL}', '')`);
  return res.rowCount;
}

/**
 * Takes a delivery out of the queue for good (kept as `discarded`, so a late duplicate stays one).
 * A leased delivery cannot be discarded: the DELETE waits for a claim in progress and then sees its
 * lease.
 */
export async function discardDelivery(db: Queryable, source: string, eventId: string): Promise<InboxListItem> {
  const res = await db.query(
    `WITH dequeued AS (
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
     RETURNING d.source`,
    [source, eventId],
  );
  if (res.rowCount > 0) return getItem(db, source, eventId);
  const status = await currentStatus(db, source, eventId);
  throw new TekilError('CONFLICT', `${source}/${eventId} is ${status}; only dead, stale or pending deliveries can be discarded`);
}

async function getItem(db: Queryable, source: string, eventId: string): Promise<InboxListItem> {
  const res = await db.query<InboxListItem>(`SELECT ${LIST_COLUMNS} FROM ${WITH_QUEUE} WHERE d.source = $1 AND d.event_id = $2`, [source, eventId]);
  const row = res.rows[0];
  if (!row) throw new TekilError('NOT_FOUND', `no delivery ${source}/${eventId}`);
  return row;
}

async function currentStatus(db: Queryable, source: string, eventId: string): Promise<string> {
  return (await getItem(db, source, eventId)).status;
}

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
  next_attempt_at: Date;
  last_attempt_at: Date | null;
  processed_at: Date | null;
  last_error: string | null;
  result_ref: string | null;
}

/** A claimed delivery is stored as pending with a live lease; operators see it as processing. */
const STATUS = `CASE WHEN status = 'pending' AND locked_until > now() THEN 'processing' ELSE status END`;
const LIST_COLUMNS = `source, event_id, resource_id, event_type, ${STATUS} AS status, attempts, occurred_at, received_at,
  next_attempt_at, last_attempt_at, processed_at, last_error, result_ref`;

function whereClause(filter: InboxFilter, params: unknown[]): string[] {
  const where: string[] = [];
  const add = (sql: string, value: unknown) => {
    params.push(value);
    where.push(sql.replace('?', `$${params.length}`));
  };
  if (filter.status === 'processing') where.push("status = 'pending' AND locked_until > now()");
  else if (filter.status === 'pending') where.push("status = 'pending' AND (locked_until IS NULL OR locked_until <= now())");
  else if (filter.status) add('status = ?', filter.status);
  if (filter.source) add('source = ?', filter.source);
  if (filter.type) add('event_type = ?', filter.type);
  if (filter.resourceId) add('resource_id = ?', filter.resourceId);
  if (filter.from) add('received_at >= ?', filter.from);
  if (filter.to) add('received_at < ?', filter.to);
  return where;
}

/** Newest first, keyset-paginated on (received_at, source, event_id): stable while rows arrive. */
export async function listInbox(db: Queryable, filter: InboxFilter, page: { limit: number; cursor?: string | undefined }): Promise<{ items: InboxListItem[]; next_cursor: string | null }> {
  const params: unknown[] = [];
  const where = whereClause(filter, params);
  if (page.cursor) {
    const c = decodeCursor(page.cursor);
    params.push(c.receivedAt, c.source, c.eventId);
    const n = params.length;
    where.push(`(received_at, source, event_id) < ($${n - 2}::timestamptz, $${n - 1}, $${n})`);
  }
  params.push(page.limit + 1);
  // received_at travels in the cursor as Postgres text: microseconds survive, a JS Date would not.
  const res = await db.query<InboxListItem & { cursor_at: string }>(
    `SELECT ${LIST_COLUMNS}, received_at::text AS cursor_at FROM inbox_deliveries ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
     ORDER BY received_at DESC, source DESC, event_id DESC LIMIT $${params.length}`,
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
    `SELECT ${LIST_COLUMNS}, content_type, headers, body FROM inbox_deliveries WHERE source = $1 AND event_id = $2`,
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

export async function replayDelivery(db: Queryable, source: string, eventId: string, force: boolean): Promise<InboxListItem> {
  const res = await db.query<InboxListItem>(
    `UPDATE inbox_deliveries SET status = 'pending', attempts = 0, next_attempt_at = now(), locked_until = NULL,
       locked_by = NULL, guard_bypass = $3
     WHERE source = $1 AND event_id = $2 AND (status = ANY($4::text[]) OR ($3 AND status = 'done'))
     RETURNING ${LIST_COLUMNS}`,
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
  const where = whereClause({ ...filter, status }, params);
  const res = await db.query(
    `UPDATE inbox_deliveries SET status = 'pending', attempts = 0, next_attempt_at = now(), locked_until = NULL,
       locked_by = NULL, guard_bypass = $1
     WHERE ${where.join(' AND ')}`,
    params,
  );
  if (res.rowCount > 0) await db.query(`SELECT pg_notify('${INBOX_CHANNEL}', '')`);
  return res.rowCount;
}

/** Takes a delivery out of the queue for good (kept as `discarded`, so a late duplicate stays one). */
export async function discardDelivery(db: Queryable, source: string, eventId: string): Promise<InboxListItem> {
  const res = await db.query<InboxListItem>(
    `UPDATE inbox_deliveries SET status = 'discarded', locked_until = NULL, locked_by = NULL, processed_at = coalesce(processed_at, now())
     WHERE source = $1 AND event_id = $2 AND status IN ('dead', 'stale', 'pending')
       AND (locked_until IS NULL OR locked_until <= now())
     RETURNING ${LIST_COLUMNS}`,
    [source, eventId],
  );
  const row = res.rows[0];
  if (row) return row;
  const status = await currentStatus(db, source, eventId);
  throw new TekilError('CONFLICT', `${source}/${eventId} is ${status}; only dead, stale or pending deliveries can be discarded`);
}

async function currentStatus(db: Queryable, source: string, eventId: string): Promise<string> {
  const res = await db.query<{ status: string }>(`SELECT ${STATUS} AS status FROM inbox_deliveries WHERE source = $1 AND event_id = $2`, [source, eventId]);
  const status = res.rows[0]?.status;
  if (!status) throw new TekilError('NOT_FOUND', `no delivery ${source}/${eventId}`);
  return status;
}

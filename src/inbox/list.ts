import type { Queryable } from '../store/db.js';
import { afterCursorCondition, filterConditions, listSql, QUEUED_ONLY, WITH_QUEUE } from '../store/sql/inbox/admin.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { queuedOnly, type InboxFilter } from './filter.js';

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

export interface InboxPage {
  items: InboxListItem[];
  next_cursor: string | null;
}

/** Newest first, keyset-paginated on (received_at, source, event_id): stable while rows arrive. */
export async function listInbox(db: Queryable, filter: InboxFilter, page: { limit: number; cursor?: string | undefined }): Promise<InboxPage> {
  const params: unknown[] = [];
  const where = filterConditions(filter, params);
  // Sorting on the driving table's own columns lets its index give the order (same values in both).
  const [from, k] = queuedOnly(filter.status) ? ([QUEUED_ONLY, 'q'] as const) : ([WITH_QUEUE, 'd'] as const);
  if (page.cursor !== undefined) {
    const c = decodeCursor(page.cursor);
    params.push(c.receivedAt, c.source, c.eventId);
    where.push(afterCursorCondition(k, params.length));
  }
  params.push(page.limit + 1);
  const res = await db.query<InboxListItem & { cursor_at: string }>(listSql({ from, k, where, limitParam: params.length }), params);
  const rows = res.rows.slice(0, page.limit);
  const last = rows[rows.length - 1];
  const items = rows.map(({ cursor_at: _, ...item }) => item);
  const more = res.rows.length > page.limit && last;
  return { items, next_cursor: more ? encodeCursor({ receivedAt: last.cursor_at, source: last.source, eventId: last.event_id }) : null };
}

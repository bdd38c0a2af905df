import type { Queryable } from '../store/db.js';
import { countDeliveries, listDeliveries, type InboxListRow } from '../store/sql/inbox/admin.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { filterParams, filterShape, type InboxFilter } from './filter.js';

export type InboxListItem = InboxListRow;

export interface InboxPage {
  items: InboxListItem[];
  next_cursor: string | null;
}

/** Newest first, keyset-paginated on (received_at, source, event_id): stable while rows arrive. */
export async function listInbox(db: Queryable, filter: InboxFilter, page: { limit: number; cursor?: string | undefined }): Promise<InboxPage> {
  const c = page.cursor === undefined ? undefined : decodeCursor(page.cursor);
  // Sorting on the driving table's own columns lets its index give the order (same values in both).
  const res = await listDeliveries(filterShape(filter)).run(db, {
    ...filterParams(filter),
    afterReceivedAt: c?.receivedAt ?? null,
    afterSource: c?.source ?? null,
    afterEventId: c?.eventId ?? null,
    limit: page.limit + 1,
  });
  const rows = res.rows.slice(0, page.limit);
  const last = rows[rows.length - 1];
  const items = rows.map(({ cursor_at: _, ...item }) => item);
  const more = res.rows.length > page.limit && last;
  return { items, next_cursor: more ? encodeCursor({ receivedAt: last.cursor_at, source: last.source, eventId: last.event_id }) : null };
}

/** How many deliveries a filter matches now: the dry run, and a job's total. */
export async function countInboxMatching(db: Queryable, filter: InboxFilter): Promise<number> {
  const { rows } = await countDeliveries(filterShape(filter)).run(db, filterParams(filter));
  return Number(rows[0]?.n ?? 0);
}

import { TekilError } from '../errors.js';
import type { Queryable } from '../store/db.js';
import { DELIVERY_ATTEMPTS_SQL, GET_ITEM_SQL, SHOW_DELIVERY_SQL } from '../store/sql/inbox/admin.js';
import type { InboxListItem } from './list.js';

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
  const res = await db.query<InboxListItem & { content_type: string | null; headers: Record<string, string>; body: Uint8Array }>(SHOW_DELIVERY_SQL, [source, eventId]);
  const row = res.rows[0];
  if (!row) throw new TekilError('NOT_FOUND', `no delivery ${source}/${eventId}`);
  const attempts = await db.query<InboxAttempt>(DELIVERY_ATTEMPTS_SQL, [source, eventId]);
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

/** One delivery as the list shows it. */
export async function getInboxItem(db: Queryable, source: string, eventId: string): Promise<InboxListItem> {
  const res = await db.query<InboxListItem>(GET_ITEM_SQL, [source, eventId]);
  const row = res.rows[0];
  if (!row) throw new TekilError('NOT_FOUND', `no delivery ${source}/${eventId}`);
  return row;
}

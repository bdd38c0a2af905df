import { TekilError } from '../errors.js';
import type { Queryable } from '../store/db.js';
import { deliveryAttempts, getItem, showDelivery as showDeliveryStatement, type InboxAttemptRow } from '../store/sql/inbox/admin.js';
import type { InboxListItem } from './list.js';

export type InboxAttempt = InboxAttemptRow;

export interface InboxDetail extends InboxListItem {
  content_type: string | null;
  headers: Record<string, string>;
  /** The body as text when it is valid UTF-8, else base64 (see body_encoding); empty once trimmed. */
  body: string;
  body_encoding: 'utf8' | 'base64';
  /** When retention trimmed the body and headers (the record stays, so copies are still duplicates); null while kept. */
  body_trimmed_at: Date | null;
  /** When the body and headers were erased on request (docs/erasure.md); null unless erased. */
  body_erased_at: Date | null;
  attempt_history: InboxAttempt[];
}

export async function showDelivery(db: Queryable, source: string, eventId: string): Promise<InboxDetail> {
  const res = await showDeliveryStatement.run(db, { source, eventId });
  const found = res.rows[0];
  if (!found) throw new TekilError('NOT_FOUND', `no delivery ${source}/${eventId}`);
  const { trimmed_at: trimmedAt, ...row } = found;
  const attempts = await deliveryAttempts.run(db, { source, eventId });
  const bytes = Buffer.from(row.body);
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  const isUtf8 = Buffer.from(text, 'utf8').equals(bytes);
  return {
    ...row,
    body: isUtf8 ? text : bytes.toString('base64'),
    body_encoding: isUtf8 ? 'utf8' : 'base64',
    body_trimmed_at: trimmedAt,
    body_erased_at: row.erased_at,
    attempt_history: attempts.rows,
  };
}

/** One delivery as the list shows it, and when its body was trimmed. */
export async function getInboxItem(db: Queryable, source: string, eventId: string): Promise<InboxListItem & { trimmed_at: Date | null }> {
  const res = await getItem.run(db, { source, eventId });
  const row = res.rows[0];
  if (!row) throw new TekilError('NOT_FOUND', `no delivery ${source}/${eventId}`);
  return row;
}

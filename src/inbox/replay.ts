import { TekilError } from '../errors.js';
import type { Queryable } from '../store/db.js';
import { discard, replayMany, replayOne } from '../store/sql/inbox/admin.js';
import { notifyInbox } from '../store/sql/inbox/notify.js';
import type { InboxListItem } from './list.js';
import { getInboxItem } from './show.js';
import { erasedError, trimmedError } from '../retention/trimmed.js';

/**
 * Puts deliveries back in the queue. `dead`, `stale` and `discarded` ones replay freely; a `done` one
 * only with `force` — its handler runs again, and effects made through `ctx.tx` are still not doubled
 * as long as the handler's writes are conditional (see the example app). `force` also lets the event
 * past the ordering guard once. Attempts restart from zero (the history keeps every earlier attempt).
 */
export const REPLAYABLE: readonly string[] = ['dead', 'stale', 'discarded'];

export async function replayDelivery(db: Queryable, source: string, eventId: string, force: boolean): Promise<InboxListItem> {
  // The answer is the state the replay wrote: a worker may claim the delivery the moment it commits.
  const res = await replayOne.run(db, { source, eventId, force, replayable: [...REPLAYABLE] });
  const row = res.rows[0];
  if (row) {
    await notifyInbox.run(db);
    return row;
  }
  const { status, trimmed_at: trimmedAt, erased_at: erasedAt } = await getInboxItem(db, source, eventId);
  if (erasedAt) throw erasedError(`${source}/${eventId}`, erasedAt);
  if (trimmedAt) throw trimmedError(`${source}/${eventId}`, trimmedAt);
  if (status === 'done')
    throw new TekilError('CONFLICT', `${source}/${eventId} is done; replaying it needs force`, { hint: 'add --force (API: "force": true)' });
  throw new TekilError('CONFLICT', `${source}/${eventId} is ${status}: already queued`);
}

/**
 * Replays a page of deliveries in one statement, each as replayDelivery would; one that changed since
 * it was listed, or whose body retention trimmed, is passed over. Answers how many were replayed.
 */
export async function replayDeliveries(db: Queryable, keys: readonly { source: string; event_id: string }[], force: boolean): Promise<number> {
  if (keys.length === 0) return 0;
  const res = await replayMany.run(db, { sources: keys.map((k) => k.source), eventIds: keys.map((k) => k.event_id), force, replayable: [...REPLAYABLE] });
  if (res.rowCount > 0) await notifyInbox.run(db);
  return res.rowCount;
}

/**
 * Takes a delivery out of the queue for good (kept as `discarded`, so a late duplicate stays one).
 * Dead, stale and pending (not leased) deliveries can be discarded.
 */
export async function discardDelivery(db: Queryable, source: string, eventId: string): Promise<InboxListItem> {
  const res = await discard.run(db, { source, eventId });
  if (res.rowCount > 0) return getInboxItem(db, source, eventId);
  const { status } = await getInboxItem(db, source, eventId);
  throw new TekilError('CONFLICT', `${source}/${eventId} is ${status}; only dead, stale or pending deliveries can be discarded`);
}

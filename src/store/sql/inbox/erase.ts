import { defineStatement } from '../statement.js';

/**
 * Erasure of inbound deliveries (docs/erasure.md): which ones, by their ids or by a resource id (of
 * one source, or of all), and the statement that empties them. Only settled deliveries (done, stale,
 * discarded) are erased: a pending one still has its processing to do and a dead one waits in the
 * review queue, so both are counted as in flight and left whole; an operator processes or discards
 * them, then erases. The status is checked on the locked row's latest version, so a replay that
 * committed first wins. The record stays: its id deduplicates for as long as it exists.
 */
export interface InboxErasureSelection extends Record<string, unknown> {
  /** Chosen deliveries: sources[i] with eventIds[i]. */
  sources: string[];
  eventIds: string[];
  /** Every delivery of this resource id; null for none. */
  resourceId: string | null;
  /** With resourceId: of this source only; null for every source. */
  resourceSource: string | null;
}

const SELECTED = `(
  (d.source, d.event_id) IN (SELECT k.source, k.event_id FROM unnest($sources::text[], $eventIds::text[]) AS k (source, event_id))
  OR ($resourceId::text IS NOT NULL AND d.resource_id = $resourceId AND ($resourceSource::text IS NULL OR d.source = $resourceSource))
)`;
const SETTLED = `d.status IN ('done', 'stale', 'discarded')`;

/** Empties the selected settled deliveries not erased yet; answers each erased one. */
export const eraseInboxDeliveries = defineStatement<InboxErasureSelection, { source: string; event_id: string }>(
  'tekil_erase_inbox_deliveries',
  `
UPDATE inbox_deliveries d SET body = ''::bytea, headers = '{}'::jsonb, trimmed_at = coalesce(d.trimmed_at, now()), erased_at = now()
WHERE ${SELECTED} AND ${SETTLED} AND d.erased_at IS NULL
RETURNING d.source, d.event_id`,
);

/** What the selection holds besides the ones just erased: erased before, and in flight (pending, processing, dead). */
export const countInboxErasureRest = defineStatement<InboxErasureSelection, { already: number; in_flight: number }>(
  'tekil_erase_inbox_rest',
  `
SELECT count(*) FILTER (WHERE d.erased_at IS NOT NULL)::int AS already,
       count(*) FILTER (WHERE d.erased_at IS NULL AND NOT ${SETTLED})::int AS in_flight
FROM inbox_deliveries d WHERE ${SELECTED}`,
);

/** The chosen deliveries that exist: a chosen one missing here is not found. */
export const findInboxErasureIds = defineStatement<{ sources: string[]; eventIds: string[] }, { source: string; event_id: string }>(
  'tekil_erase_inbox_find',
  `
SELECT d.source, d.event_id FROM inbox_deliveries d
WHERE (d.source, d.event_id) IN (SELECT k.source, k.event_id FROM unnest($sources::text[], $eventIds::text[]) AS k (source, event_id))`,
);

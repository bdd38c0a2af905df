import type { Queryable } from '../store/db.js';
import { TekilError } from '../errors.js';
import { countInboxErasureRest, eraseInboxDeliveries, findInboxErasureIds } from '../store/sql/inbox/erase.js';

/** Which inbound deliveries to erase: chosen ones, and/or every one of a resource id. */
export interface InboundErasure {
  deliveries: readonly { source: string; event_id: string }[];
  resourceId?: string | undefined;
  /** With resourceId: of this source only. */
  source?: string | undefined;
}

export interface ErasureCounts {
  /** Erased by this request. */
  erased: number;
  /** Erased before: nothing left to do. */
  already: number;
  /** Not settled (pending, processing, dead): left whole, to be processed or discarded first. */
  in_flight: number;
}

/**
 * Erases the body and headers of the selected settled inbound deliveries (docs/erasure.md). The
 * record stays as a tombstone: the same (source, event_id) arriving later is a duplicate and runs
 * nothing. A chosen delivery that does not exist is not found, and nothing is erased (run it in a
 * transaction with the rest of the request). Answers counts only, never what was erased.
 */
export async function eraseInbound(db: Queryable, selection: InboundErasure): Promise<ErasureCounts> {
  const params = {
    sources: selection.deliveries.map((d) => d.source),
    eventIds: selection.deliveries.map((d) => d.event_id),
    resourceId: selection.resourceId ?? null,
    resourceSource: selection.source ?? null,
  };
  if (params.sources.length === 0 && params.resourceId === null) return { erased: 0, already: 0, in_flight: 0 };
  if (params.sources.length > 0) {
    const found = (await findInboxErasureIds.run(db, params)).rows;
    for (const d of selection.deliveries) {
      if (!found.some((f) => f.source === d.source && f.event_id === d.event_id)) throw new TekilError('NOT_FOUND', `no delivery ${d.source}/${d.event_id}`);
    }
  }
  const erased = await eraseInboxDeliveries.run(db, params);
  const rest = (await countInboxErasureRest.run(db, params)).rows[0] ?? { already: 0, in_flight: 0 };
  // The rows erased just now count as erased before in the second statement's snapshot.
  return { erased: erased.rowCount, already: rest.already - erased.rowCount, in_flight: rest.in_flight };
}

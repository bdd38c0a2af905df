import { TekilError } from '../errors.js';
import type { Queryable } from '../store/db.js';
import { eraseOutboxMessages, findOutboxErasureIds, lockOutboxErasure } from '../store/sql/outbox/erase.js';
import { scopeTenantId, type Scope } from '../scope.js';

/** What an erasure did: erased now, erased before, and left whole because still in flight. */
export interface ErasureCounts {
  erased: number;
  already: number;
  in_flight: number;
}

/** Which outbound messages to erase: chosen messages, the messages of chosen deliveries, and/or every one of a resource id. */
export interface OutboundErasure {
  messageIds: readonly string[];
  deliveryIds: readonly string[];
  resourceId?: string | undefined;
}

/**
 * Erases the payload of the selected settled messages of the scope, and the answers kept on their
 * attempts (docs/erasure.md). A chosen message or delivery that is not the scope's (another tenant's
 * included) is not found, and nothing is erased. The message, its deliveries and attempts stay, so its
 * id and its idempotency key keep answering. Run in the caller's transaction: the selection is locked,
 * then checked again with a fresh snapshot (src/store/sql/outbox/erase.ts).
 */
export async function eraseOutbound(tx: Queryable, scope: Scope, selection: OutboundErasure): Promise<ErasureCounts> {
  const params = {
    tenantId: scopeTenantId(scope),
    messageIds: [...selection.messageIds],
    deliveryIds: [...selection.deliveryIds],
    resourceId: selection.resourceId ?? null,
  };
  if (params.messageIds.length === 0 && params.deliveryIds.length === 0 && params.resourceId === null) return { erased: 0, already: 0, in_flight: 0 };
  const found = (await findOutboxErasureIds.run(tx, params)).rows;
  for (const id of new Set(params.messageIds)) {
    if (!found.some((f) => f.kind === 'message' && f.id === id)) throw new TekilError('NOT_FOUND', `no message ${id}`);
  }
  for (const id of new Set(params.deliveryIds)) {
    if (!found.some((f) => f.kind === 'delivery' && f.id === id)) throw new TekilError('NOT_FOUND', `no delivery ${id}`);
  }
  const locked = (await lockOutboxErasure.run(tx, params)).rows;
  const open = locked.filter((m) => !m.erased);
  const erased = open.length ? (await eraseOutboxMessages.run(tx, { tenantIds: open.map((m) => m.tenant_id), ids: open.map((m) => m.id) })).rowCount : 0;
  return { erased, already: locked.length - open.length, in_flight: open.length - erased };
}

import { defineStatement } from '../statement.js';

/**
 * Erasure of outbound messages (docs/erasure.md): the payload, and the answers kept on the attempts
 * of its deliveries, emptied on request. Chosen by message id, by delivery id (its message), or by a
 * resource id, always within the caller's tenant (`$tenantId`, null for every tenant). A message with
 * a delivery still pending or sending is in flight and left whole: erasing it would make the
 * dispatcher send empty bytes.
 *
 * Two statements in one transaction, for the reason retention has two (src/store/sql/outbox/retention.ts):
 * a replay locks the message (FOR SHARE) and then resets a delivery, so the first statement locks the
 * selected messages (waiting for a replay in progress), and the second, with a fresh snapshot, checks
 * again that each is settled before it empties it.
 */
export interface OutboxErasureSelection extends Record<string, unknown> {
  tenantId: string | null;
  messageIds: string[];
  /** Outbound delivery ids (bigint, as text). */
  deliveryIds: string[];
  resourceId: string | null;
}

const SETTLED = `NOT EXISTS (SELECT 1 FROM outbox_deliveries od WHERE od.tenant_id = m.tenant_id AND od.message_id = m.id AND od.status IN ('pending', 'sending'))`;

/** Locks the selected messages of the scope; answers their keys and whether each was erased before. */
export const lockOutboxErasure = defineStatement<OutboxErasureSelection, { tenant_id: string; id: string; erased: boolean }>(
  'tekil_erase_outbox_lock',
  `
SELECT m.tenant_id, m.id, m.erased_at IS NOT NULL AS erased FROM outbox_messages m
WHERE ($tenantId::text IS NULL OR m.tenant_id = $tenantId) AND (
  m.id = ANY($messageIds::text[])
  OR ($resourceId::text IS NOT NULL AND m.resource_id = $resourceId)
  OR EXISTS (SELECT 1 FROM outbox_deliveries od WHERE od.tenant_id = m.tenant_id AND od.message_id = m.id AND od.id = ANY($deliveryIds::bigint[]))
)
ORDER BY m.tenant_id, m.id
FOR UPDATE OF m`,
);

/** Given the locked keys: empties those still settled and not erased, and their attempts' kept answers; answers each erased one. */
export const eraseOutboxMessages = defineStatement<{ tenantIds: string[]; ids: string[] }, { id: string }>(
  'tekil_erase_outbox_messages',
  `
WITH target AS (
  SELECT m.tenant_id, m.id FROM outbox_messages m JOIN unnest($tenantIds::text[], $ids::text[]) AS k (tenant_id, id) ON m.tenant_id = k.tenant_id AND m.id = k.id
  WHERE m.erased_at IS NULL AND ${SETTLED}
),
answers AS (
  UPDATE outbox_attempts a SET response_body = NULL
  FROM outbox_deliveries od JOIN target t ON od.tenant_id = t.tenant_id AND od.message_id = t.id
  WHERE a.tenant_id = od.tenant_id AND a.delivery_id = od.id AND a.response_body IS NOT NULL
)
UPDATE outbox_messages m SET payload = ''::bytea, trimmed_at = coalesce(m.trimmed_at, now()), erased_at = now()
FROM target t WHERE m.tenant_id = t.tenant_id AND m.id = t.id
RETURNING m.id`,
);

/** The chosen messages and deliveries of the scope that exist: a chosen id missing here is not found (another tenant's included). */
export const findOutboxErasureIds = defineStatement<{ tenantId: string | null; messageIds: string[]; deliveryIds: string[] }, { kind: string; id: string }>(
  'tekil_erase_outbox_find',
  `
SELECT 'message' AS kind, m.id FROM outbox_messages m WHERE ($tenantId::text IS NULL OR m.tenant_id = $tenantId) AND m.id = ANY($messageIds::text[])
UNION ALL
SELECT 'delivery', od.id::text FROM outbox_deliveries od WHERE ($tenantId::text IS NULL OR od.tenant_id = $tenantId) AND od.id = ANY($deliveryIds::bigint[])`,
);

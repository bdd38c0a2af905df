import { defineStatement } from '../statement.js';

/**
 * Retention of the outbox, run by the sweeper in small batches, two statements per batch in one
 * transaction. A message is touched only when none of its deliveries is pending or sending.
 *
 * Why two: a replay locks the message row (FOR SHARE) and then resets a delivery. One statement
 * that both chose settled messages and changed them would judge "settled" on the snapshot it
 * started with: a replay committed after that snapshot but before the row was reached would go
 * unseen, and the message would be trimmed (the dispatcher then sends an empty body) or deleted
 * (with the replayed delivery). So the first statement only locks candidates (FOR UPDATE SKIP
 * LOCKED: a message being replayed is skipped), and the second, with a fresh snapshot, checks again
 * that each is settled before it changes it; a replay that starts later waits for the batch's lock
 * and then finds the message trimmed or gone. Failed deliveries count as settled: see
 * docs/retention.md. `$start` is where the previous batch of the sweep ended (its latest `created_at`).
 */
/** One batch of the sweep: messages created before `cutoff`, from `start` on, at most `batchSize`. */
export interface OutboxRetentionParams extends Record<string, unknown> {
  cutoff: Date;
  batchSize: number;
  start: Date;
}

const SETTLED = `NOT EXISTS (SELECT 1 FROM outbox_deliveries od WHERE od.tenant_id = m.tenant_id AND od.message_id = m.id AND od.status IN ('pending', 'sending'))`;

/** Locks settled messages created before the cut-off whose payload is still there. */
export const lockOutboxPayloads = defineStatement<OutboxRetentionParams, { tenant_id: string; id: string; at: Date }>(
  'tekil_retention_lock_outbox_payloads',
  `
SELECT m.tenant_id, m.id, m.created_at AS at FROM outbox_messages m
WHERE m.trimmed_at IS NULL AND m.created_at < $cutoff AND m.created_at >= $start AND ${SETTLED}
ORDER BY m.created_at LIMIT $batchSize
FOR UPDATE SKIP LOCKED`,
);

/**
 * Given the locked keys (tenant and id): empties the payload of those still settled and the kept answers of their
 * attempts. The message, its deliveries and their attempts stay.
 */
export const trimOutboxPayloads = defineStatement<{ tenantIds: string[]; ids: string[] }, never>(
  'tekil_retention_trim_outbox_payloads',
  `
WITH target AS (
  SELECT m.tenant_id, m.id FROM outbox_messages m JOIN unnest($tenantIds::text[], $ids::text[]) AS k (tenant_id, id) ON m.tenant_id = k.tenant_id AND m.id = k.id
  WHERE ${SETTLED}
),
answers AS (
  UPDATE outbox_attempts a SET response_body = NULL
  FROM outbox_deliveries od JOIN target t ON od.tenant_id = t.tenant_id AND od.message_id = t.id
  WHERE a.tenant_id = od.tenant_id AND a.delivery_id = od.id AND a.response_body IS NOT NULL
)
UPDATE outbox_messages m SET payload = ''::bytea, trimmed_at = now() FROM target t WHERE m.tenant_id = t.tenant_id AND m.id = t.id`,
);

/** Locks settled messages created before the cut-off. */
export const lockOutboxMessages = defineStatement<OutboxRetentionParams, { tenant_id: string; id: string; at: Date }>(
  'tekil_retention_lock_outbox_messages',
  `
SELECT m.tenant_id, m.id, m.created_at AS at FROM outbox_messages m
WHERE m.created_at < $cutoff AND m.created_at >= $start AND ${SETTLED}
ORDER BY m.created_at LIMIT $batchSize
FOR UPDATE SKIP LOCKED`,
);

/**
 * Given the locked keys (tenant and id): deletes those still settled, with their deliveries, their attempts and the queue
 * rows of failed ones (the outbox
 * keeps no foreign keys on its hot paths: migration 012). One row per deleted message.
 */
export const deleteOutboxMessages = defineStatement<{ tenantIds: string[]; ids: string[] }, { id: string }>(
  'tekil_retention_delete_outbox_messages',
  `
WITH message AS (
  DELETE FROM outbox_messages m USING unnest($tenantIds::text[], $ids::text[]) AS k (tenant_id, id)
  WHERE m.tenant_id = k.tenant_id AND m.id = k.id AND ${SETTLED} RETURNING m.tenant_id, m.id
), delivery AS (
  DELETE FROM outbox_deliveries od USING message WHERE od.tenant_id = message.tenant_id AND od.message_id = message.id RETURNING od.tenant_id, od.id
), attempt AS (
  DELETE FROM outbox_attempts a USING delivery WHERE a.tenant_id = delivery.tenant_id AND a.delivery_id = delivery.id
), queued AS (
  -- A failed delivery's parked queue row (migration 013).
  DELETE FROM outbox_queue q USING delivery WHERE q.tenant_id = delivery.tenant_id AND q.delivery_id = delivery.id
)
SELECT id FROM message`,
);

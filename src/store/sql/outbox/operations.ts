import { defineStatement, type NoParams } from '../statement.js';
import { OUTBOX_CHANNEL } from './publish-message.js';

/** Operator actions on the outbox (replay, bulk replay, ping): small statements, one file. */

/** Wakes every dispatcher (delivered at commit when run inside a transaction). */
export const notifyDispatchers = defineStatement<NoParams, never>('tekil_notify_dispatchers', `SELECT pg_notify('${OUTBOX_CHANNEL}', '')`);

/** A replayed delivery starts its ladder over; its attempt numbers continue. */
const RESET = `status = 'pending', next_attempt_at = now(), ladder_base = outbox_deliveries.attempts, lease = NULL, completed_at = NULL`;

/** The message: its tenant (with its id, its key), and when retention trimmed its payload (null while kept). */
export const messageExists = defineStatement<{ messageId: string }, { tenant_id: string; trimmed_at: Date | null; erased_at: Date | null }>(
  'tekil_outbox_message_exists',
  'SELECT tenant_id, trimmed_at, erased_at FROM outbox_messages WHERE id = $messageId',
);

/**
 * A replay resets a delivery only while its message keeps its payload, and locks the message (FOR
 * SHARE) so the retention sweeper (FOR UPDATE SKIP LOCKED) cannot trim it in between; a trim that
 * committed first is seen on the locked row, and the delivery is left alone.
 */
const PAYLOAD_KEPT = (tenantId: string, messageId: string) =>
  `EXISTS (SELECT 1 FROM outbox_messages m WHERE m.tenant_id = ${tenantId} AND m.id = ${messageId} AND m.trimmed_at IS NULL FOR SHARE OF m)`;
export const liveEndpointExists = defineStatement<{ endpointId: string }, { exists: number }>(
  'tekil_outbox_live_endpoint_exists',
  'SELECT 1 AS exists FROM endpoints WHERE id = $endpointId AND deleted_at IS NULL',
);

/**
 * Each reset delivery (re)enters the queue, due now; the statement counts one row per delivery. The
 * record is written first, as by every writer of both tables.
 */
const REQUEUE = (reset: string) => `
INSERT INTO outbox_queue (tenant_id, delivery_id, endpoint_id) SELECT tenant_id, id, endpoint_id FROM ${reset}
ON CONFLICT (tenant_id, delivery_id) DO UPDATE SET next_attempt_at = now(), lease_until = NULL, failed = false`;

/**
 * Creates the message's delivery to the endpoint, or resets the one there is. The delivery is the
 * message's tenant's, and only to an endpoint of that tenant (none is written otherwise).
 */
export const replayToEndpoint = defineStatement<{ tenantId: string; messageId: string; endpointId: string }, never>(
  'tekil_outbox_replay_to_endpoint',
  `
WITH reset AS (
  INSERT INTO outbox_deliveries (tenant_id, message_id, endpoint_id)
  SELECT m.tenant_id, m.id, e.id FROM outbox_messages m JOIN endpoints e ON e.id = $endpointId AND e.tenant_id = m.tenant_id
  WHERE m.tenant_id = $tenantId AND m.id = $messageId AND m.trimmed_at IS NULL FOR SHARE OF m
  ON CONFLICT (tenant_id, message_id, endpoint_id, (coalesce(url, ''))) DO UPDATE SET ${RESET}
  RETURNING outbox_deliveries.tenant_id, outbox_deliveries.id, outbox_deliveries.endpoint_id
)${REQUEUE('reset')}`,
);

/** Every delivery the message had to an endpoint of its tenant that still exists. */
export const replayMessage = defineStatement<{ tenantId: string; messageId: string }, never>(
  'tekil_outbox_replay_message',
  `
WITH reset AS (
  UPDATE outbox_deliveries SET ${RESET}
  WHERE outbox_deliveries.tenant_id = $tenantId AND outbox_deliveries.message_id = $messageId
    AND outbox_deliveries.endpoint_id IN (SELECT id FROM endpoints WHERE deleted_at IS NULL AND tenant_id = $tenantId)
    AND ${PAYLOAD_KEPT('$tenantId', '$messageId')}
  RETURNING outbox_deliveries.tenant_id, outbox_deliveries.id, outbox_deliveries.endpoint_id
)${REQUEUE('reset')}`,
);

/**
 * Failed deliveries (of an endpoint, created since, until: each may be null) created in that window whose
 * message keeps its payload, each to a live endpoint of its own tenant. Failed deliveries are found through the queue, where they stay parked.
 */
export const replayFailed = defineStatement<{ endpointId: string | null; tenantId: string | null; since: Date | null; until: Date | null }, never>(
  'tekil_outbox_replay_failed',
  `
WITH reset AS (
  UPDATE outbox_deliveries SET ${RESET}
  FROM outbox_queue q
  WHERE q.failed AND outbox_deliveries.tenant_id = q.tenant_id AND outbox_deliveries.id = q.delivery_id AND outbox_deliveries.status = 'failed'
    AND ($tenantId::text IS NULL OR q.tenant_id = $tenantId)
    AND ($endpointId::text IS NULL OR outbox_deliveries.endpoint_id = $endpointId)
    AND ($since::timestamptz IS NULL OR outbox_deliveries.created_at >= $since)
    AND ($until::timestamptz IS NULL OR outbox_deliveries.created_at < $until)
    AND outbox_deliveries.endpoint_id IN (SELECT id FROM endpoints WHERE deleted_at IS NULL AND tenant_id = outbox_deliveries.tenant_id)
    AND ${PAYLOAD_KEPT('outbox_deliveries.tenant_id', 'outbox_deliveries.message_id')}
  RETURNING outbox_deliveries.tenant_id, outbox_deliveries.id, outbox_deliveries.endpoint_id
)${REQUEUE('reset')}`,
);

/** A `test.ping` message with one delivery, to that endpoint only; it is the endpoint's tenant's message. */
export const insertPing = defineStatement<{ id: string; endpointId: string; payload: Buffer }, never>(
  'tekil_outbox_insert_ping',
  `
WITH msg AS (INSERT INTO outbox_messages (id, tenant_id, event_type, resource_id, payload)
             SELECT $id, e.tenant_id, 'test.ping', $endpointId, $payload FROM endpoints e WHERE e.id = $endpointId RETURNING tenant_id, id),
delivery AS (INSERT INTO outbox_deliveries (tenant_id, message_id, endpoint_id) SELECT tenant_id, id, $endpointId FROM msg RETURNING tenant_id, id, endpoint_id)
INSERT INTO outbox_queue (tenant_id, delivery_id, endpoint_id) SELECT tenant_id, id, endpoint_id FROM delivery`,
);

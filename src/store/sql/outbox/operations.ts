import { OUTBOX_CHANNEL } from './publish-message.js';

/** Operator actions on the outbox (replay, bulk replay, ping): small statements, one file. */

/** Wakes every dispatcher (delivered at commit when run inside a transaction). */
export const NOTIFY_DISPATCHERS = `SELECT pg_notify('${OUTBOX_CHANNEL}', '')`;

/** A replayed delivery starts its ladder over; its attempt numbers continue. */
const RESET = `status = 'pending', next_attempt_at = now(), ladder_base = outbox_deliveries.attempts, lease = NULL, completed_at = NULL`;

/** The message, and when retention trimmed its payload (null while kept). */
export const MESSAGE_EXISTS = 'SELECT trimmed_at FROM outbox_messages WHERE id = $1';

/**
 * A replay resets a delivery only while its message keeps its payload, and locks the message (FOR
 * SHARE) so the retention sweeper (FOR UPDATE SKIP LOCKED) cannot trim it in between; a trim that
 * committed first is seen on the locked row, and the delivery is left alone.
 */
const PAYLOAD_KEPT = (messageId: string) =>
  `EXISTS (SELECT 1 FROM outbox_messages m WHERE m.id = ${messageId} AND m.trimmed_at IS NULL FOR SHARE OF m)`;
export const LIVE_ENDPOINT_EXISTS = 'SELECT 1 FROM endpoints WHERE id = $1 AND deleted_at IS NULL';

/**
 * Each reset delivery (re)enters the queue, due now; the statement counts one row per delivery. The
 * record is written first, as by every writer of both tables.
 */
const REQUEUE = (reset: string) => `
INSERT INTO outbox_queue (delivery_id, endpoint_id) SELECT id, endpoint_id FROM ${reset}
ON CONFLICT (delivery_id) DO UPDATE SET next_attempt_at = now(), lease_until = NULL, failed = false`;

/** $1 message, $2 endpoint: creates the delivery, or resets the one there is. */
export const REPLAY_TO_ENDPOINT = `
WITH reset AS (
  INSERT INTO outbox_deliveries (message_id, endpoint_id) SELECT $1, $2 WHERE ${PAYLOAD_KEPT('$1')}
  ON CONFLICT (message_id, endpoint_id, (coalesce(url, ''))) DO UPDATE SET ${RESET}
  RETURNING outbox_deliveries.id, outbox_deliveries.endpoint_id
)${REQUEUE('reset')}`;

/** $1 message: every delivery it had to an endpoint that still exists. */
export const REPLAY_MESSAGE = `
WITH reset AS (
  UPDATE outbox_deliveries SET ${RESET}
  WHERE message_id = $1 AND endpoint_id IN (SELECT id FROM endpoints WHERE deleted_at IS NULL) AND ${PAYLOAD_KEPT('$1')}
  RETURNING outbox_deliveries.id, outbox_deliveries.endpoint_id
)${REQUEUE('reset')}`;

/**
 * $1 endpoint, $2 since, $3 until (each may be null): failed deliveries created in that window whose
 * message keeps its payload. Failed deliveries are found through the queue, where they stay parked.
 */
export const REPLAY_FAILED = `
WITH reset AS (
  UPDATE outbox_deliveries SET ${RESET}
  FROM outbox_queue q
  WHERE q.failed AND outbox_deliveries.id = q.delivery_id AND outbox_deliveries.status = 'failed'
    AND ($1::text IS NULL OR outbox_deliveries.endpoint_id = $1)
    AND ($2::timestamptz IS NULL OR outbox_deliveries.created_at >= $2)
    AND ($3::timestamptz IS NULL OR outbox_deliveries.created_at < $3)
    AND outbox_deliveries.endpoint_id IN (SELECT id FROM endpoints WHERE deleted_at IS NULL)
    AND ${PAYLOAD_KEPT('outbox_deliveries.message_id')}
  RETURNING outbox_deliveries.id, outbox_deliveries.endpoint_id
)${REQUEUE('reset')}`;

/** $1 id, $2 endpoint, $3 payload: a `test.ping` message with one delivery, to that endpoint only. */
export const INSERT_PING = `
WITH msg AS (INSERT INTO outbox_messages (id, event_type, resource_id, payload) VALUES ($1, 'test.ping', $2, $3) RETURNING id),
delivery AS (INSERT INTO outbox_deliveries (message_id, endpoint_id) SELECT id, $2 FROM msg RETURNING id, endpoint_id)
INSERT INTO outbox_queue (delivery_id, endpoint_id) SELECT id, endpoint_id FROM delivery`;

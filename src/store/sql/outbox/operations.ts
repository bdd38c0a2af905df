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

/** $1 message, $2 endpoint: creates the delivery, or resets the one there is. */
export const REPLAY_TO_ENDPOINT = `
INSERT INTO outbox_deliveries (message_id, endpoint_id) SELECT $1, $2 WHERE ${PAYLOAD_KEPT('$1')}
ON CONFLICT (message_id, endpoint_id, (coalesce(url, ''))) DO UPDATE SET ${RESET}`;

/** $1 message: every delivery it had to an endpoint that still exists. */
export const REPLAY_MESSAGE = `
UPDATE outbox_deliveries SET ${RESET}
WHERE message_id = $1 AND endpoint_id IN (SELECT id FROM endpoints WHERE deleted_at IS NULL) AND ${PAYLOAD_KEPT('$1')}`;

/** $1 endpoint, $2 since, $3 until (each may be null): failed deliveries created in that window whose message keeps its payload. */
export const REPLAY_FAILED = `
UPDATE outbox_deliveries SET ${RESET}
WHERE status = 'failed'
  AND ($1::text IS NULL OR endpoint_id = $1)
  AND ($2::timestamptz IS NULL OR created_at >= $2)
  AND ($3::timestamptz IS NULL OR created_at < $3)
  AND endpoint_id IN (SELECT id FROM endpoints WHERE deleted_at IS NULL)
  AND ${PAYLOAD_KEPT('outbox_deliveries.message_id')}`;

/** $1 id, $2 endpoint, $3 payload: a `test.ping` message with one delivery, to that endpoint only. */
export const INSERT_PING = `
WITH msg AS (INSERT INTO outbox_messages (id, event_type, resource_id, payload) VALUES ($1, 'test.ping', $2, $3) RETURNING id)
INSERT INTO outbox_deliveries (message_id, endpoint_id) SELECT id, $2 FROM msg`;

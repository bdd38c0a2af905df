import { defineStatement } from '../statement.js';

/** The channel publish notifies; the dispatcher listens on it. */
export const OUTBOX_CHANNEL = 'tekil_outbox';
/** The outbox wake-up lock, in the two-key advisory lock space (apart from tekil's one-key locks). */
const WAKE_LOCK_CLASS = 0x74656b; // "tek"
const WAKE_LOCK_ID = 1;

export interface PublishMessageParams extends Record<string, unknown> {
  id: string;
  event_type: string;
  resource_id: string | null;
  payload: Buffer;
  idempotency_key: string | null;
  extra_endpoint_ids: string[];
  extra_urls: string[];
}

/**
 * One statement: the message, one delivery per matching enabled endpoint, the extra destinations, and
 * a NOTIFY that Postgres delivers only if the caller's transaction commits. Returns no row when the
 * idempotency key was used before.
 *
 * One wake-up serves concurrent publishers: only the transaction that gets the wake-up lock (an
 * advisory lock held to its end) notifies. Postgres commits notifying transactions one at a time (it
 * holds a global lock across each one's commit), so a NOTIFY in every publishing transaction turned 32
 * concurrent callers' group commit into a queue. A publisher that finds the lock taken skips its
 * NOTIFY: the holder's wakes the dispatcher, which claims again shortly after every wake-up for
 * publishers that commit after the holder (src/outbox/dispatcher.ts), with polling as the backstop.
 */
export const publishMessage = defineStatement<PublishMessageParams>(
  'tekil_outbox_publish',
  `
WITH msg AS (
  INSERT INTO outbox_messages (id, event_type, resource_id, payload, idempotency_key)
  VALUES ($id, $event_type, $resource_id, $payload, $idempotency_key)
  ON CONFLICT (idempotency_key) DO NOTHING
  RETURNING id, event_type
), fanout AS (
  INSERT INTO outbox_deliveries (message_id, endpoint_id, url)
  SELECT msg.id, e.id, NULL FROM msg JOIN endpoints e
    ON e.enabled AND e.deleted_at IS NULL AND (
      cardinality(e.event_types) = 0
      OR msg.event_type = ANY (e.event_types)
      OR EXISTS (SELECT 1 FROM unnest(e.event_types) AS p
                 WHERE p = '*' OR (right(p, 2) = '.*' AND starts_with(msg.event_type, left(p, -1)))))
  UNION ALL
  SELECT msg.id, x.endpoint_id, x.url FROM msg CROSS JOIN unnest($extra_endpoint_ids::text[], $extra_urls::text[]) AS x (endpoint_id, url)
  ON CONFLICT DO NOTHING
  RETURNING 1
)
SELECT msg.id, (SELECT count(*) FROM fanout)::int AS deliveries, CASE WHEN pg_try_advisory_xact_lock(${WAKE_LOCK_CLASS}, ${WAKE_LOCK_ID}) THEN pg_notify('${OUTBOX_CHANNEL}', '') END AS notified FROM msg`,
);

/** The first message published under an idempotency key. */
export const MESSAGE_BY_IDEMPOTENCY_KEY = 'SELECT id FROM outbox_messages WHERE idempotency_key = $1';

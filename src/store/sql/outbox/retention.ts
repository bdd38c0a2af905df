/**
 * Retention of the outbox, run by the sweeper in small batches. A message is touched only when none
 * of its deliveries is pending or sending. Replays lock the message row (FOR SHARE) before they
 * reset a delivery, so the sweeper either skips a message being replayed (SKIP LOCKED) or finishes
 * first, and the replay then finds the message trimmed or gone. `$3` is where the previous batch of
 * the sweep ended (its latest `created_at`), as for the inbox; each answers the `created_at` of its rows.
 */
const SETTLED = `NOT EXISTS (SELECT 1 FROM outbox_deliveries od WHERE od.message_id = m.id AND od.status IN ('pending', 'sending'))`;

/**
 * $1 cut-off, $2 batch size, $3 start: empties the payload of settled messages created before the cut-off and
 * the kept answers of their attempts. The message, its deliveries and their attempts stay.
 */
export const TRIM_OUTBOX_PAYLOADS = `
WITH target AS (
  SELECT m.id FROM outbox_messages m
  WHERE m.trimmed_at IS NULL AND m.created_at < $1 AND m.created_at >= $3 AND ${SETTLED}
  ORDER BY m.created_at LIMIT $2
  FOR UPDATE SKIP LOCKED
),
answers AS (
  UPDATE outbox_attempts a SET response_body = NULL
  FROM outbox_deliveries od JOIN target t ON od.message_id = t.id
  WHERE a.delivery_id = od.id AND a.response_body IS NOT NULL
)
UPDATE outbox_messages m SET payload = ''::bytea, trimmed_at = now() FROM target t WHERE m.id = t.id
RETURNING m.created_at AS at`;

/** $1 cut-off, $2 batch size, $3 start: deletes settled messages created before the cut-off; their deliveries and attempts go with them (ON DELETE CASCADE). */
export const DELETE_OUTBOX_MESSAGES = `
WITH target AS (
  SELECT m.id FROM outbox_messages m
  WHERE m.created_at < $1 AND m.created_at >= $3 AND ${SETTLED}
  ORDER BY m.created_at LIMIT $2
  FOR UPDATE SKIP LOCKED
)
DELETE FROM outbox_messages m USING target t WHERE m.id = t.id
RETURNING m.created_at AS at`;

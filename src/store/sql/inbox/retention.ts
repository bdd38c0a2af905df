/**
 * Retention of the inbox, run by the sweeper in small batches. Only settled deliveries (done, stale,
 * discarded) are touched: a pending one still has work to do, and a dead one waits in the review
 * queue for an operator. Each statement takes at most `$3` rows, oldest first, and skips rows another
 * transaction holds (a replay, a completion, a second sweeper), so it never waits on, nor stalls, the
 * receiver and the workers. The status is checked again on the locked row's latest version, so a
 * replay that committed first wins. `$4` is where the previous batch of the sweep ended (its latest
 * `received_at`): each batch starts there, so rows the sweep passes over (another source's, a dead
 * one) are read once per sweep, not once per batch. Each answers the `received_at` of its rows.
 */
const SETTLED = `d.status IN ('done', 'stale', 'discarded')`;

/**
 * $1 source, $2 cut-off, $3 batch size, $4 start: empties the body and headers of settled deliveries received
 * before the cut-off. The record stays, so the id keeps deduplicating. Through the partial index of
 * untrimmed rows, so what was trimmed before is never read again.
 */
export const TRIM_INBOX_BODIES = `
WITH target AS (
  SELECT d.source, d.event_id FROM inbox_deliveries d
  WHERE d.trimmed_at IS NULL AND d.received_at < $2 AND d.received_at >= $4 AND d.source = $1 AND ${SETTLED}
  ORDER BY d.received_at LIMIT $3
  FOR UPDATE SKIP LOCKED
)
UPDATE inbox_deliveries d SET body = ''::bytea, headers = '{}'::jsonb, trimmed_at = now()
FROM target t WHERE d.source = t.source AND d.event_id = t.event_id
RETURNING d.received_at AS at`;

/**
 * $1 source, $2 cut-off, $3 batch size, $4 start: deletes settled records received before the cut-off with
 * their attempt history (their ids are forgotten: a later copy would be new).
 */
export const DELETE_INBOX_RECORDS = `
WITH target AS (
  SELECT d.source, d.event_id FROM inbox_deliveries d
  WHERE d.received_at < $2 AND d.received_at >= $4 AND d.source = $1 AND ${SETTLED}
  ORDER BY d.received_at LIMIT $3
  FOR UPDATE SKIP LOCKED
),
history AS (
  DELETE FROM inbox_attempt_history h USING target t WHERE h.event_id = t.event_id AND h.source = t.source
)
DELETE FROM inbox_deliveries d USING target t WHERE d.source = t.source AND d.event_id = t.event_id
RETURNING d.received_at AS at`;

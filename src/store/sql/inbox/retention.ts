import { defineStatement } from '../statement.js';

/**
 * Retention of the inbox, run by the sweeper in small batches. Only settled deliveries (done, stale,
 * discarded) are touched: a pending one still has work to do, and a dead one waits in the review
 * queue for an operator. Each statement takes at most `$batchSize` rows, oldest first, and skips rows another
 * transaction holds (a replay, a completion, a second sweeper), so it never waits on, nor stalls, the
 * receiver and the workers. The status is checked again on the locked row's latest version, so a
 * replay that committed first wins. `$start` is where the previous batch of the sweep ended (its latest
 * `received_at`): each batch starts there, so rows the sweep passes over (another source's, a dead
 * one) are read once per sweep, not once per batch. Each answers the `received_at` of its rows.
 */
/** One batch of a source's sweep: rows received before `cutoff`, from `start` on, at most `batchSize`. */
export interface InboxRetentionParams extends Record<string, unknown> {
  source: string;
  cutoff: Date;
  batchSize: number;
  start: Date;
}

const SETTLED = `d.status IN ('done', 'stale', 'discarded')`;

/**
 * Empties the body and headers of settled deliveries received
 * before the cut-off. The record stays, so the id keeps deduplicating. Through the partial index of
 * untrimmed rows, so what was trimmed before is never read again.
 */
export const trimInboxBodies = defineStatement<InboxRetentionParams, { at: Date }>(
  'tekil_retention_trim_inbox',
  `
WITH target AS (
  SELECT d.source, d.event_id FROM inbox_deliveries d
  WHERE d.trimmed_at IS NULL AND d.received_at < $cutoff AND d.received_at >= $start AND d.source = $source AND ${SETTLED}
  ORDER BY d.received_at LIMIT $batchSize
  FOR UPDATE SKIP LOCKED
)
UPDATE inbox_deliveries d SET body = ''::bytea, headers = '{}'::jsonb, trimmed_at = now()
FROM target t WHERE d.source = t.source AND d.event_id = t.event_id
RETURNING d.received_at AS at`,
);

/**
 * Deletes settled records received before the cut-off with
 * their attempt history (their ids are forgotten: a later copy would be new).
 */
export const deleteInboxRecords = defineStatement<InboxRetentionParams, { at: Date }>(
  'tekil_retention_delete_inbox',
  `
WITH target AS (
  SELECT d.source, d.event_id FROM inbox_deliveries d
  WHERE d.received_at < $cutoff AND d.received_at >= $start AND d.source = $source AND ${SETTLED}
  ORDER BY d.received_at LIMIT $batchSize
  FOR UPDATE SKIP LOCKED
),
history AS (
  DELETE FROM inbox_attempt_history h USING target t WHERE h.event_id = t.event_id AND h.source = t.source
)
DELETE FROM inbox_deliveries d USING target t WHERE d.source = t.source AND d.event_id = t.event_id
RETURNING d.received_at AS at`,
);

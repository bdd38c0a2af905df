import type { OutboxClaimedDelivery } from '../../../outbox/types.js';
import type { Queryable } from '../../db.js';
import { defineStatement } from '../statement.js';

/**
 * Claims due deliveries. Per endpoint it takes no more than the endpoint's free in-flight slots, so a
 * dead endpoint's backlog cannot fill a batch; endpoint rows are locked (NO KEY UPDATE, which does not
 * block publishing) and skipped when another dispatcher is claiming them, which keeps the cap exact
 * across dispatchers. A claimed row's next_attempt_at becomes its lease's end: if this process dies,
 * the row is due again once the lease runs out. A row whose previous status is still `sending` was
 * abandoned that way.
 */
const claimStatement = defineStatement<{ limit: number; lease: string; lease_margin_ms: number }>(
  'tekil_outbox_claim',
  `
WITH eps AS (
  SELECT e.id, e.max_in_flight, e.timeout_ms FROM endpoints e
  WHERE e.enabled AND e.deleted_at IS NULL
    -- The earliest due time from the due index (one probe per endpoint). An EXISTS here lets the
    -- planner pick a sequential scan that walks every finished delivery, slower with each claim.
    AND (SELECT min(d.next_attempt_at) FROM outbox_deliveries d
         WHERE d.endpoint_id = e.id AND d.status IN ('pending', 'sending')) <= now()
  FOR NO KEY UPDATE SKIP LOCKED
), picked AS (
  SELECT p.id, p.message_id, eps.id AS endpoint_id, p.status AS previous_status, p.last_attempt_at AS previous_attempt_at, eps.timeout_ms
  FROM eps CROSS JOIN LATERAL (
    SELECT d.id, d.message_id, d.status, d.last_attempt_at FROM outbox_deliveries d
    WHERE d.endpoint_id = eps.id AND d.status IN ('pending', 'sending') AND d.next_attempt_at <= now()
    ORDER BY d.next_attempt_at
    -- Never lock more than the claim can take: each locked row costs a write.
    LIMIT least($limit::int, greatest(0, eps.max_in_flight - (
      SELECT count(*) FROM outbox_deliveries s
      WHERE s.endpoint_id = eps.id AND s.status = 'sending' AND s.next_attempt_at > now())))
    FOR UPDATE SKIP LOCKED
  ) p
  LIMIT $limit
)
UPDATE outbox_deliveries d
SET status = 'sending', attempts = d.attempts + 1, lease = $lease, last_attempt_at = now(),
    next_attempt_at = now() + (picked.timeout_ms + $lease_margin_ms::double precision) * interval '1 millisecond'
FROM picked
JOIN outbox_messages m ON m.id = picked.message_id
JOIN endpoints e ON e.id = picked.endpoint_id
WHERE d.id = picked.id
-- Every returned value is decoded for every row: the endpoint's values come in forms that are cheap to
-- read (numbers, text), and a timestamp only where it is used.
RETURNING d.id, d.message_id, d.endpoint_id, coalesce(d.url, e.url) AS url, d.attempts AS attempt, d.ladder_base,
  picked.previous_status, CASE WHEN picked.previous_status = 'sending' THEN picked.previous_attempt_at END AS previous_attempt_at,
  m.payload, m.event_type, e.scheme, e.scheme_options::text AS scheme_options_json, e.timeout_ms, e.ladder::text AS ladder_json,
  (extract(epoch FROM e.updated_at) * 1000)::double precision AS endpoint_updated_ms, e.consecutive_failures`,
);

export async function claimDeliveries(db: Queryable, limit: number, lease: string, leaseMarginMs: number): Promise<OutboxClaimedDelivery[]> {
  const params = claimStatement.bind({ limit, lease, lease_margin_ms: leaseMarginMs });
  const { rows } = await db.query<OutboxClaimedDelivery>(claimStatement.text, params, { name: claimStatement.name, sizeDependentPlan: true });
  return rows;
}

import type { Queryable } from '../../db.js';
import { defineStatement } from '../statement.js';

/** Claimed deliveries whose attempt never started (a stopping dispatcher) go back to pending at once. */
export const releaseUnstartedStatement = defineStatement<{ tenantIds: string[]; ids: number[]; leases: string[] }, never>(
  'tekil_outbox_release_unstarted',
  `
WITH released AS (
  UPDATE outbox_deliveries d SET status = 'pending', attempts = d.attempts - 1, next_attempt_at = now(), lease = NULL
  FROM unnest($tenantIds::text[], $ids::bigint[], $leases::text[]) AS c (tenant_id, id, lease)
  WHERE d.tenant_id = c.tenant_id AND d.id = c.id AND d.lease = c.lease AND d.status = 'sending'
  RETURNING d.tenant_id, d.id
), finished AS (
  -- Given back, the request is no longer in its tenant's flight (migration 026).
  INSERT INTO outbox_tenant_done AS o (tenant_id, requests_done)
  SELECT released.tenant_id, count(*) FROM released GROUP BY released.tenant_id ORDER BY released.tenant_id
  ON CONFLICT (tenant_id) DO UPDATE SET requests_done = o.requests_done + excluded.requests_done
)
-- The queue row keeps its due time: the delivery stays where it was in its endpoint's order.
UPDATE outbox_queue q SET lease_until = NULL FROM released WHERE q.tenant_id = released.tenant_id AND q.delivery_id = released.id`,
);

export async function releaseUnstarted(db: Queryable, claims: ReadonlyArray<{ tenantId: string; id: number; lease: string }>): Promise<void> {
  if (claims.length === 0) return;
  await releaseUnstartedStatement.run(db, { tenantIds: claims.map((c) => c.tenantId), ids: claims.map((c) => c.id), leases: claims.map((c) => c.lease) });
}

import type { Queryable } from '../../db.js';
import { defineStatement } from '../statement.js';

export const recordAbandonedStatement = defineStatement<
  { tenantIds: string[]; ids: number[]; messageIds: string[]; endpointIds: string[]; attempts: number[]; urls: string[]; startedAt: Date[] },
  never
>(
  'tekil_outbox_record_abandoned',
  `
INSERT INTO outbox_attempts (tenant_id, delivery_id, message_id, endpoint_id, attempt, url, started_at, duration_ms, succeeded, error)
SELECT tid, id, mid, eid, n, url, started, 0, false, 'dispatcher stopped during the attempt (lease expired); outcome unknown'
FROM unnest($tenantIds::text[], $ids::bigint[], $messageIds::text[], $endpointIds::text[], $attempts::int[], $urls::text[], $startedAt::timestamptz[]) AS x (tid, id, mid, eid, n, url, started)`,
  'prepared',
);

/** Records attempts a dispatcher started but never finished (it died): the lease ran out. */
export async function recordAbandoned(
  db: Queryable,
  rows: ReadonlyArray<{ tenant_id: string; id: number; message_id: string; endpoint_id: string; attempt: number; url: string; startedAt: Date }>,
): Promise<void> {
  if (rows.length === 0) return;
  await recordAbandonedStatement.run(db, {
    tenantIds: rows.map((r) => r.tenant_id),
    ids: rows.map((r) => r.id),
    messageIds: rows.map((r) => r.message_id),
    endpointIds: rows.map((r) => r.endpoint_id),
    attempts: rows.map((r) => r.attempt),
    urls: rows.map((r) => r.url),
    startedAt: rows.map((r) => r.startedAt),
  });
}

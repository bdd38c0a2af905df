import type { Queryable } from '../../db.js';

const RECORD_ABANDONED = `
INSERT INTO outbox_attempts (delivery_id, message_id, endpoint_id, attempt, url, started_at, duration_ms, succeeded, error)
SELECT id, mid, eid, n, url, started, 0, false, 'dispatcher stopped during the attempt (lease expired); outcome unknown'
FROM unnest($1::bigint[], $2::text[], $3::text[], $4::int[], $5::text[], $6::timestamptz[]) AS x (id, mid, eid, n, url, started)`;

/** Records attempts a dispatcher started but never finished (it died): the lease ran out. */
export async function recordAbandoned(
  db: Queryable,
  rows: ReadonlyArray<{ id: number; message_id: string; endpoint_id: string; attempt: number; url: string; startedAt: Date }>,
): Promise<void> {
  if (rows.length === 0) return;
  await db.query(
    RECORD_ABANDONED,
    [rows.map((r) => r.id), rows.map((r) => r.message_id), rows.map((r) => r.endpoint_id), rows.map((r) => r.attempt), rows.map((r) => r.url), rows.map((r) => r.startedAt)],
    { name: 'tekil_outbox_record_abandoned' },
  );
}

import type { Queryable } from '../../db.js';

/** Claimed deliveries whose attempt never started (a stopping dispatcher) go back to pending at once. */
const RELEASE_UNSTARTED = `
UPDATE outbox_deliveries d SET status = 'pending', attempts = d.attempts - 1, next_attempt_at = now(), lease = NULL
FROM unnest($1::bigint[], $2::text[]) AS q (id, lease)
WHERE d.id = q.id AND d.lease = q.lease AND d.status = 'sending'`;

export async function releaseUnstarted(db: Queryable, claims: ReadonlyArray<{ id: number; lease: string }>): Promise<void> {
  if (claims.length === 0) return;
  await db.query(RELEASE_UNSTARTED, [claims.map((c) => c.id), claims.map((c) => c.lease)]);
}

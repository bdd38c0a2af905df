import { defineStatement } from '../statement.js';

/** One audit row as stored (`id` is a bigint, read as text). */
export interface AuditEventRow {
  id: string;
  at: Date;
  actor: string;
  role: string | null;
  tenant_id: string | null;
  address: string | null;
  method: string;
  route: string;
  target: Record<string, unknown>;
  status: number;
  error_code: string | null;
  /** Refusals the row stands for (one per key and minute, migration 028); 1 for any other row. */
  count: number;
  /** The last refusal counted in the row, when it stands for more than one. */
  last_at: Date | null;
}

export type AuditEventInsert = {
  actor: string;
  role: string | null;
  address: string | null;
  method: string;
  route: string;
  /** JSON text of the route's params, query and body summary. */
  target: string;
  status: number;
  errorCode: string | null;
  /** The tenant of a tenant's caller (a tenant token, a portal session or link); null otherwise. */
  tenantId: string | null;
};

export const insertAuditEvent = defineStatement<AuditEventInsert, never>(
  'audit_insert_event',
  `INSERT INTO audit_events (actor, role, address, method, route, target, status, error_code, tenant_id)
     VALUES ($actor, $role, $address, $method, $route, $target::jsonb, $status, $errorCode, $tenantId)`,
  'prepared',
);

export type AuditListParams = {
  actor: string | null;
  route: string | null;
  method: string | null;
  since: Date | null;
  until: Date | null;
  /** `ok` (status below 400), `refused` (400 and above), or null for both. */
  outcome: 'ok' | 'refused' | null;
  before: string | null;
  limit: number;
};

/** Newest first, by id; the optional filters fold away when null (the statement is planned with its values). */
export const listAuditEvents = defineStatement<AuditListParams, AuditEventRow>(
  'audit_list_events',
  `SELECT id::text AS id, at, actor, role, tenant_id, address, method, route, target, status, error_code, count,
          CASE WHEN count > 1 THEN last_at END AS last_at
     FROM audit_events
    WHERE ($actor::text IS NULL OR actor = $actor)
      AND ($route::text IS NULL OR route = $route)
      AND ($method::text IS NULL OR method = $method)
      AND ($since::timestamptz IS NULL OR at >= $since)
      AND ($until::timestamptz IS NULL OR at < $until)
      AND ($outcome::text IS NULL OR ($outcome = 'ok') = (status < 400))
      AND ($before::bigint IS NULL OR id < $before::bigint)
    ORDER BY audit_events.id DESC
    LIMIT $limit`,
);

/** Retention: the oldest rows before the cutoff, from `start` on, a batch at a time. */
export const deleteAuditEvents = defineStatement<{ cutoff: Date; start: Date; batchSize: number }, { at: Date }>(
  'audit_delete_old_events',
  `DELETE FROM audit_events WHERE id IN (
     SELECT id FROM audit_events WHERE at < $cutoff AND at >= $start ORDER BY at, id LIMIT $batchSize
   ) RETURNING at`,
);

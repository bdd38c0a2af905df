import { defineStatement } from '../statement.js';

/**
 * The Tenants page's reads (docs/dashboard.md, "Tenants"). A page of tenants is found first; health is
 * then read for that page's endpoints only, each read bounded per endpoint, so the cost follows the
 * page's size and never the number of tenants or the length of the history.
 */

export interface TenantListRow {
  id: string;
  name: string | null;
  disabled: boolean;
  created_at: Date;
}

/**
 * Tenants in id order after `afterId`, whose id or name contains `pattern` (an ILIKE pattern, its
 * wildcards escaped by the caller). The primary key's order serves the paging; a search reads on
 * through the tenants (at most the whole table: 20,000 short rows) until the page is full.
 */
export const searchTenants = defineStatement<{ afterId: string | null; pattern: string | null; limit: number }, TenantListRow>(
  'dashboard_tenants_search',
  `SELECT id, name, disabled, created_at FROM tenants
   WHERE deleted_at IS NULL AND ($afterId::text IS NULL OR id > $afterId)
     AND ($pattern::text IS NULL OR id ILIKE $pattern ESCAPE '\\' OR name ILIKE $pattern ESCAPE '\\')
   ORDER BY id LIMIT $limit`,
);

export interface TenantEndpointHealthRow {
  id: string;
  tenant_id: string;
  enabled: boolean;
  disabled_reason: string | null;
  failed_attempts_in_row: number;
  probe_at: Date | null;
  /** Of the endpoint's latest `sample` deliveries, those whose last attempt started in the window. */
  attempted: number;
  /** Of those, the ones that succeeded. */
  succeeded: number;
  /** Deliveries waiting to be sent (retrying included), counted up to `pendingCap`. */
  pending: number;
}

/**
 * The live endpoints of the given tenants (the partial tenant_id index), each with:
 * - its latest `sample` deliveries, newest first, through the (endpoint_id, id) index, of which those
 *   attempted in the window and those that succeeded: at most `sample` rows read per endpoint;
 * - its deliveries waiting in the queue, through the due index, at most `pendingCap` rows read.
 * The breaker's streak is the endpoint row's own (`failed_attempts_in_row`, counted across dispatchers).
 */
export const tenantEndpointHealth = defineStatement<{ tenantIds: string[]; since: Date; sample: number; pendingCap: number }, TenantEndpointHealthRow>(
  'dashboard_tenants_endpoint_health',
  `SELECT e.id, e.tenant_id, e.enabled, e.disabled_reason, e.failed_attempts_in_row, e.probe_at,
          s.attempted, s.succeeded, p.pending
   FROM endpoints e
   CROSS JOIN LATERAL (
     SELECT count(*)::int AS attempted, count(*) FILTER (WHERE d.status = 'succeeded')::int AS succeeded
     FROM (SELECT status, last_attempt_at FROM outbox_deliveries WHERE endpoint_id = e.id ORDER BY id DESC LIMIT $sample) d
     WHERE d.last_attempt_at >= $since AND d.status <> 'cancelled'
   ) s
   CROSS JOIN LATERAL (
     SELECT count(*)::int AS pending
     FROM (SELECT 1 FROM outbox_queue q WHERE q.endpoint_id = e.id AND NOT q.failed LIMIT $pendingCap) w
   ) p
   WHERE e.tenant_id = ANY($tenantIds::text[]) AND e.deleted_at IS NULL
   ORDER BY e.tenant_id, e.id`,
);

/**
 * Failed deliveries (their ladder ran out) of the given endpoints, per endpoint: the failed rows of the
 * queue through their partial index, the same read as the overview's failed count.
 */
export const failedPerEndpoint = defineStatement<{ endpointIds: string[] }, { endpoint_id: string; failed: number }>(
  'dashboard_tenants_failed_per_endpoint',
  `SELECT endpoint_id, count(*)::int AS failed FROM outbox_queue
   WHERE failed AND endpoint_id = ANY($endpointIds::text[])
   GROUP BY endpoint_id`,
);

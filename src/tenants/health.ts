import type { Queryable } from '../store/db.js';
import { failedPerEndpoint, searchTenants, tenantEndpointHealth, type TenantEndpointHealthRow } from '../store/sql/tenants/health.js';

/** Deliveries read per endpoint for its success rate: the newest ones, through the (endpoint_id, id) index. */
export const HEALTH_SAMPLE = 100;
/** Waiting deliveries counted per endpoint at most; past it the tenant's count says "at least". */
export const PENDING_CAP = 1000;
/** Failing endpoints named per tenant at most (the count is always whole). */
const FAILING_NAMED = 10;

/** Why an endpoint counts as failing (docs/dashboard.md, "Tenants"). */
export type FailingReason = 'disabled_after_failures' | 'breaker_open' | 'failing_in_a_row' | 'low_success_rate';

export interface TenantHealth {
  id: string;
  name: string | null;
  disabled: boolean;
  created_at: Date;
  endpoints: number;
  failing_endpoints: number;
  failing: Array<{ endpoint_id: string; reason: FailingReason }>;
  /** Deliveries attempted in the window (of each endpoint's newest ones) and those that succeeded. */
  attempted: number;
  succeeded: number;
  /** succeeded / attempted; null with nothing attempted in the window. */
  success_rate: number | null;
  pending: number;
  /** True when an endpoint had more waiting than was counted: `pending` is then a lower bound. */
  pending_more: boolean;
  failed: number;
}

export interface TenantHealthPage {
  window_ms: number;
  items: TenantHealth[];
  next_cursor: string | null;
}

export interface TenantHealthQuery {
  q?: string | undefined;
  after?: string | undefined;
  limit: number;
  windowMs: number;
}

/** The rules that say an endpoint is failing: the endpoint_failing alert's and the circuit breaker's. */
export interface FailingRules {
  /** The endpoint_failing alert's thresholds (config `alerts.rules.endpoint_failing`). */
  endpointFailing: { failures: number; success_below: number; min_attempts: number };
  /** Failed attempts in a row that open the breaker; 0 when it is off. */
  breakerFailures: number;
}

/** An ILIKE pattern matching `text` anywhere, its own wildcards taken literally. */
const containsPattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * Why the endpoint is failing, or undefined: disabled by tekil after failed deliveries; its breaker
 * open; its last attempts failed in a row (the alert's `failures`); or, with at least the alert's
 * `min_attempts` deliveries attempted in the window, fewer than `success_below` percent succeeded.
 */
export function failingReason(e: TenantEndpointHealthRow, rules: FailingRules): FailingReason | undefined {
  const alert = rules.endpointFailing;
  if (!e.enabled) return e.disabled_reason?.startsWith('disabled after') ? 'disabled_after_failures' : undefined;
  if (rules.breakerFailures > 0 && e.failed_attempts_in_row >= rules.breakerFailures) return 'breaker_open';
  if (e.failed_attempts_in_row >= alert.failures) return 'failing_in_a_row';
  if (e.attempted >= alert.min_attempts && (100 * e.succeeded) / e.attempted < alert.success_below) return 'low_success_rate';
  return undefined;
}

/**
 * A page of tenants with each one's health. Three reads: the page of tenants, its endpoints with their
 * bounded samples, and their failed deliveries; none of them grows with the number of tenants.
 */
export async function tenantHealthPage(db: Queryable, query: TenantHealthQuery, rules: FailingRules, now = new Date()): Promise<TenantHealthPage> {
  const q = query.q?.trim();
  const { rows: tenants } = await searchTenants.run(db, { afterId: query.after ?? null, pattern: q ? containsPattern(q) : null, limit: query.limit });
  const byTenant = new Map<string, TenantHealth>(
    tenants.map((t) => [
      t.id,
      { ...t, endpoints: 0, failing_endpoints: 0, failing: [], attempted: 0, succeeded: 0, success_rate: null, pending: 0, pending_more: false, failed: 0 },
    ]),
  );
  if (tenants.length > 0) {
    const since = new Date(now.getTime() - query.windowMs);
    const { rows: endpoints } = await tenantEndpointHealth.run(db, { tenantIds: [...byTenant.keys()], since, sample: HEALTH_SAMPLE, pendingCap: PENDING_CAP });
    const tenantOf = new Map<string, TenantHealth>();
    for (const e of endpoints) {
      const t = byTenant.get(e.tenant_id);
      if (!t) continue;
      tenantOf.set(e.id, t);
      t.endpoints += 1;
      t.attempted += e.attempted;
      t.succeeded += e.succeeded;
      t.pending += e.pending;
      if (e.pending >= PENDING_CAP) t.pending_more = true;
      const reason = failingReason(e, rules);
      if (reason) {
        t.failing_endpoints += 1;
        if (t.failing.length < FAILING_NAMED) t.failing.push({ endpoint_id: e.id, reason });
      }
    }
    if (tenantOf.size > 0) {
      for (const f of (await failedPerEndpoint.run(db, { endpointIds: [...tenantOf.keys()] })).rows) {
        const t = tenantOf.get(f.endpoint_id);
        if (t) t.failed += f.failed;
      }
    }
    for (const t of byTenant.values()) t.success_rate = t.attempted === 0 ? null : t.succeeded / t.attempted;
  }
  const items = [...byTenant.values()];
  return { window_ms: query.windowMs, items, next_cursor: tenants.length === query.limit ? tenants[tenants.length - 1]!.id : null };
}

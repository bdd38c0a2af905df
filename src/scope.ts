/**
 * The tenants a request may read or change: every one (an operator, the admin token) or one (a
 * tenant's token or portal session). The admin API makes it once per request from the caller
 * (src/tenants/scope.ts) and hands it to the handler; every list, detail and export of tenant-owned
 * rows takes one, required, so a new list cannot forget the filter: it does not compile without it.
 */
export type Scope = { readonly all: true; readonly tenantId?: undefined } | { readonly all?: undefined; readonly tenantId: string };

/** Every tenant's rows: an operator's or the admin token's scope, and tekil's own work. */
export const EVERY_TENANT: Scope = Object.freeze({ all: true });

/** One tenant's rows only. */
export function tenantScope(tenantId: string): Scope {
  return { tenantId };
}

/** The tenant a statement filters on: null for every tenant (`$tenant_id::text IS NULL OR …`). */
export function scopeTenantId(scope: Scope): string | null {
  return scope.tenantId ?? null;
}

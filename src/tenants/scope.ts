import type { Caller } from '../auth/roles.js';
import { TekilError } from '../errors.js';
import { EVERY_TENANT, tenantScope, type Scope } from '../scope.js';
import type { Queryable } from '../store/db.js';
import { endpointTenant, messageTenant } from '../store/sql/tenants/ownership.js';

/**
 * A tenant caller's view of ids (docs/tenants.md): another tenant's message or endpoint is answered
 * exactly as one that does not exist, with the same code and words, so an id is never confirmed.
 * The scope of an operator or the admin token is every tenant: every id is theirs.
 */

/** The scope of a request, made once from its caller (the admin API hands it to every handler). */
export function scopeOf(caller: Pick<Caller, 'tenantId'> | undefined): Scope {
  return caller?.tenantId === undefined ? EVERY_TENANT : tenantScope(caller.tenantId);
}

/**
 * The scope a list or export reads in when the request names a `tenant_id`: a tenant caller's own,
 * whatever it asks (a `tenant_id` naming another tenant is answered as a tenant that does not exist);
 * an operator's narrows to the tenant it names.
 */
export function narrowScope(scope: Scope, asked: string | undefined): Scope {
  if (scope.tenantId === undefined) return asked === undefined ? scope : tenantScope(asked);
  if (asked !== undefined && asked !== scope.tenantId) throw new TekilError('TENANT_NOT_FOUND', `no tenant ${asked}`);
  return scope;
}

export async function requireMessageIn(db: Queryable, scope: Scope, id: string): Promise<void> {
  if (scope.tenantId === undefined) return;
  const { rows } = await messageTenant.run(db, { id });
  if (rows[0]?.tenant_id !== scope.tenantId) throw new TekilError('NOT_FOUND', `no message ${id}`);
}

export async function requireEndpointIn(db: Queryable, scope: Scope, id: string): Promise<void> {
  if (scope.tenantId === undefined) return;
  const { rows } = await endpointTenant.run(db, { id });
  if (rows[0]?.tenant_id !== scope.tenantId) throw new TekilError('NOT_FOUND', `no endpoint ${id}`);
}

import type { Queryable } from '../store/db.js';
import { endpointTenant, messageTenant } from '../store/sql/tenants/ownership.js';
import { TekilError } from '../errors.js';

/**
 * A tenant caller's view of ids (docs/tenants.md): another tenant's message or endpoint is answered
 * exactly as one that does not exist, with the same code and words, so an id is never confirmed.
 * `tenantId` undefined is an operator or the admin token: every id is theirs.
 */

export async function requireMessageOf(db: Queryable, tenantId: string | undefined, id: string): Promise<void> {
  if (tenantId === undefined) return;
  const { rows } = await messageTenant.run(db, { id });
  if (rows[0]?.tenant_id !== tenantId) throw new TekilError('NOT_FOUND', `no message ${id}`);
}

export async function requireEndpointOf(db: Queryable, tenantId: string | undefined, id: string): Promise<void> {
  if (tenantId === undefined) return;
  const { rows } = await endpointTenant.run(db, { id });
  if (rows[0]?.tenant_id !== tenantId) throw new TekilError('NOT_FOUND', `no endpoint ${id}`);
}

/**
 * The tenant a list or export reads: a tenant caller's own, whatever it asks; a `tenant_id` naming
 * another tenant is answered as a tenant that does not exist.
 */
export function tenantFilterOf(callerTenantId: string | undefined, asked: string | undefined): string | undefined {
  if (callerTenantId === undefined) return asked;
  if (asked !== undefined && asked !== callerTenantId) throw new TekilError('TENANT_NOT_FOUND', `no tenant ${asked}`);
  return callerTenantId;
}

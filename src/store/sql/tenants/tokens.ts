import type { Queryable } from '../../db.js';
import { defineStatement } from '../statement.js';

/** Tenant tokens (migration 019): bearer tokens that see one tenant only. Only a hash is kept. */

export interface TenantTokenRow {
  id: string;
  tenant_id: string;
  name: string | null;
  role: 'viewer' | 'operator';
  prefix: string;
  created_at: Date;
  revoked_at: Date | null;
  last_used_at: Date | null;
}

const COLUMNS = 'id, tenant_id, name, role, prefix, created_at, revoked_at, last_used_at';

/** No row when the tenant does not exist or is being deleted (the caller answers TENANT_NOT_FOUND). */
const insertTenantTokenStatement = defineStatement<
  { id: string; tenantId: string; name: string | null; role: string; hash: string; prefix: string },
  TenantTokenRow
>(
  'tenant_tokens_insert',
  `INSERT INTO tenant_tokens (id, tenant_id, name, role, hash, prefix)
     SELECT $id, t.id, $name, $role, $hash, $prefix FROM tenants t WHERE t.id = $tenantId AND t.deleted_at IS NULL
   RETURNING ${COLUMNS}`,
);

const listTenantTokensStatement = defineStatement<{ tenantId: string; includeRevoked: boolean }, TenantTokenRow>(
  'tenant_tokens_list',
  `SELECT ${COLUMNS} FROM tenant_tokens WHERE tenant_id = $tenantId AND ($includeRevoked::boolean OR revoked_at IS NULL)
   ORDER BY created_at, id`,
);

/** Revokes a live token of the tenant; the sessions opened with it go with it. */
const revokeTenantTokenStatement = defineStatement<{ tenantId: string; id: string }, TenantTokenRow>(
  'tenant_tokens_revoke',
  `UPDATE tenant_tokens SET revoked_at = now() WHERE tenant_id = $tenantId AND id = $id AND revoked_at IS NULL RETURNING ${COLUMNS}`,
);

const deleteTokenSessions = defineStatement<{ id: string }, never>(
  'tenant_tokens_delete_sessions',
  'DELETE FROM dashboard_sessions WHERE tenant_token_id = $id',
);

/** A live token of a live tenant. */
const tenantTokenByHashStatement = defineStatement<{ hash: string }, TenantTokenRow>(
  'tekil_tenant_token_by_hash',
  `SELECT ${COLUMNS.split(', ')
    .map((c) => `k.${c}`)
    .join(', ')}
     FROM tenant_tokens k JOIN tenants t ON t.id = k.tenant_id
     WHERE k.hash = $hash AND k.revoked_at IS NULL AND t.deleted_at IS NULL`,
  'prepared',
);

const touchTenantToken = defineStatement<{ id: string }, never>('tenant_tokens_touch', 'UPDATE tenant_tokens SET last_used_at = now() WHERE id = $id');

export async function insertTenantToken(
  db: Queryable,
  row: { id: string; tenantId: string; name: string | null; role: string; hash: string; prefix: string },
): Promise<TenantTokenRow | undefined> {
  return (await insertTenantTokenStatement.run(db, row)).rows[0];
}

export async function selectTenantTokens(db: Queryable, tenantId: string, includeRevoked: boolean): Promise<TenantTokenRow[]> {
  return (await listTenantTokensStatement.run(db, { tenantId, includeRevoked })).rows;
}

export async function revokeTenantToken(db: Queryable, tenantId: string, id: string): Promise<TenantTokenRow | undefined> {
  const { rows } = await revokeTenantTokenStatement.run(db, { tenantId, id });
  if (rows[0]) await deleteTokenSessions.run(db, { id });
  return rows[0];
}

/** As operators' tokens: `last_used_at` is written at most once a minute. */
export async function tenantTokenByHash(db: Queryable, hash: string): Promise<TenantTokenRow | undefined> {
  const found = (await tenantTokenByHashStatement.run(db, { hash })).rows[0];
  if (found && (found.last_used_at === null || Date.now() - found.last_used_at.getTime() > 60_000)) await touchTenantToken.run(db, { id: found.id });
  return found;
}

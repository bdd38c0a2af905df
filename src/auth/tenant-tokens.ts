import { randomBytes } from 'node:crypto';
import { TekilError } from '../errors.js';
import type { Queryable } from '../store/db.js';
import { insertTenantToken, revokeTenantToken, selectTenantTokens, tenantTokenByHash, type TenantTokenRow } from '../store/sql/tenants/tokens.js';
import { hashToken } from './token-hash.js';
import type { Caller, OperatorRole } from './roles.js';

/** Every tenant token starts so: the authentication hook tells it from operator and admin tokens. */
export const TENANT_TOKEN_PREFIX = 'tkt_';

export type TenantToken = TenantTokenRow;

/** The name a tenant's caller has in logs and the audit trail. */
export function tenantCallerName(tenantId: string, tokenId?: string): string {
  return tokenId ? `tenant:${tenantId}/${tokenId}` : `tenant:${tenantId}`;
}

/** Makes a token of one tenant; the token is in this answer only. */
export async function createTenantToken(
  db: Queryable,
  tenantId: string,
  role: OperatorRole,
  name?: string,
): Promise<{ tenantToken: TenantToken; token: string }> {
  const token = `${TENANT_TOKEN_PREFIX}${randomBytes(24).toString('base64url')}`;
  const id = `ttk_${randomBytes(8).toString('hex')}`;
  const tenantToken = await insertTenantToken(db, { id, tenantId, name: name ?? null, role, hash: hashToken(token), prefix: token.slice(0, 8) });
  if (!tenantToken) throw new TekilError('TENANT_NOT_FOUND', `no tenant ${tenantId}`);
  return { tenantToken, token };
}

export function listTenantTokens(db: Queryable, tenantId: string, includeRevoked = false): Promise<TenantToken[]> {
  return selectTenantTokens(db, tenantId, includeRevoked);
}

/** Revokes a token: it stops working at once, with the sessions signed in with it. */
export async function revokeTenantTokenOf(db: Queryable, tenantId: string, id: string): Promise<TenantToken> {
  const revoked = await revokeTenantToken(db, tenantId, id);
  if (!revoked) throw new TekilError('NOT_FOUND', `no live token ${id} of tenant ${tenantId}`);
  return revoked;
}

/** The tenant caller a `tkt_` token stands for, or undefined when it is no live token of a live tenant. */
export async function callerForTenantToken(db: Queryable, presented: string): Promise<Caller | undefined> {
  const found = await tenantTokenByHash(db, hashToken(presented));
  if (!found) return undefined;
  return { role: found.role, name: tenantCallerName(found.tenant_id, found.id), tenantId: found.tenant_id, tenantTokenId: found.id };
}

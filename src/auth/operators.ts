import { randomBytes } from 'node:crypto';
import { hashToken } from './token-hash.js';
import { TekilError } from '../errors.js';
import type { Queryable } from '../store/db.js';
import { insertOperator, operatorByTokenHash, revokeOperator, selectOperators, type OperatorRow } from '../store/sql/auth/operators.js';
import { tokenMatches } from './admin-token.js';
import type { Caller, OperatorRole } from './roles.js';
import { callerForTenantToken, TENANT_TOKEN_PREFIX } from './tenant-tokens.js';

export { hashToken } from './token-hash.js';

export type Operator = OperatorRow;

/** Makes a named operator; the token is in this answer only. A live operator of the same name is a conflict. */
export async function createOperator(db: Queryable, name: string, role: OperatorRole): Promise<{ operator: Operator; token: string }> {
  const token = `tko_${randomBytes(24).toString('base64url')}`;
  const id = `op_${randomBytes(8).toString('hex')}`;
  const operator = await insertOperator(db, { id, name, role, tokenHash: hashToken(token) });
  if (!operator) throw new TekilError('CONFLICT', `an operator named ${name} exists`, { hint: 'revoke it first, or choose another name' });
  return { operator, token };
}

export function listOperators(db: Queryable, includeRevoked = false): Promise<Operator[]> {
  return selectOperators(db, includeRevoked);
}

/**
 * Revokes an operator. Its token stops working at once, and so does every session made with it: the
 * revocation is a mark on the operator, which every request with a session checks (src/auth/sessions.ts),
 * so a sign-in that read the operator as live just before the revoke still gets a dead session.
 */
export async function revoke(db: Queryable, idOrName: string): Promise<Operator> {
  const revoked = await revokeOperator(db, idOrName);
  if (!revoked) throw new TekilError('NOT_FOUND', `no live operator ${idOrName}`);
  return revoked;
}

/** The caller a bearer token stands for, or undefined when it is no live token. */
export async function callerForToken(db: Queryable, adminToken: string, presented: string | undefined): Promise<Caller | undefined> {
  if (!presented) return undefined;
  if (tokenMatches(adminToken, presented)) return { role: 'admin', name: 'admin' };
  if (presented.startsWith(TENANT_TOKEN_PREFIX)) return callerForTenantToken(db, presented);
  if (!presented.startsWith('tko_')) return undefined;
  const operator = await operatorByTokenHash(db, hashToken(presented));
  return operator ? { role: operator.role, operatorId: operator.id, name: operator.name } : undefined;
}

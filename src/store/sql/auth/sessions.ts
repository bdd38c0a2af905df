import type { Queryable } from '../../db.js';
import { defineStatement, type NoParams } from '../statement.js';

export interface SessionRow {
  operator_id: string | null;
  role: 'viewer' | 'operator' | 'admin';
  csrf_token: string;
  expires_at: Date;
  name: string | null;
  admin_token_hash: string | null;
  /** A tenant's session (migration 019): it sees that tenant only. */
  tenant_id: string | null;
  tenant_token_id: string | null;
}

const deleteExpiredSessions = defineStatement<NoParams, never>('dashboard_delete_expired_sessions', 'DELETE FROM dashboard_sessions WHERE expires_at < now()');

export interface SessionInsert extends Record<string, unknown> {
  idHash: string;
  operatorId: string | null;
  role: string;
  csrfToken: string;
  ttlMs: number;
  adminTokenHash: string | null;
  tenantId: string | null;
  tenantTokenId: string | null;
}

const insertSessionStatement = defineStatement<SessionInsert, never>(
  'dashboard_insert_session',
  `INSERT INTO dashboard_sessions (id_hash, operator_id, role, csrf_token, expires_at, admin_token_hash, tenant_id, tenant_token_id)
     VALUES ($idHash, $operatorId, $role, $csrfToken, now() + $ttlMs * interval '1 millisecond', $adminTokenHash, $tenantId, $tenantTokenId)`,
);

const selectSessionStatement = defineStatement<{ idHash: string }, SessionRow>(
  'tekil_dashboard_session',
  `SELECT s.operator_id, s.role, s.csrf_token, s.expires_at, o.name, s.admin_token_hash, s.tenant_id, s.tenant_token_id
     FROM dashboard_sessions s
     LEFT JOIN operators o ON o.id = s.operator_id
     LEFT JOIN tenant_tokens k ON k.id = s.tenant_token_id
     LEFT JOIN tenants t ON t.id = s.tenant_id
     WHERE s.id_hash = $idHash AND s.expires_at > now() AND (s.operator_id IS NULL OR o.revoked_at IS NULL)
       AND (s.tenant_token_id IS NULL OR k.revoked_at IS NULL)
       AND (s.tenant_id IS NULL OR (t.deleted_at IS NULL AND NOT t.disabled))`,
  'prepared',
);

const deleteSessionStatement = defineStatement<{ idHash: string }, never>('dashboard_delete_session', 'DELETE FROM dashboard_sessions WHERE id_hash = $idHash');

export async function insertSession(db: Queryable, row: SessionInsert): Promise<void> {
  // Expired sessions are swept whenever one is made: sign-ins are rare, so this costs nothing.
  await deleteExpiredSessions.run(db);
  await insertSessionStatement.run(db, row);
}

/**
 * The live session of an id hash, with its operator's name (none for the admin token). An operator's
 * session is live only while the operator is: a session written by a sign-in that raced the revoke is
 * as dead as the ones the revoke deleted.
 */
export async function selectSession(db: Queryable, idHash: string): Promise<SessionRow | undefined> {
  return (await selectSessionStatement.run(db, { idHash })).rows[0];
}

export async function deleteSession(db: Queryable, idHash: string): Promise<void> {
  await deleteSessionStatement.run(db, { idHash });
}

import type { Queryable } from '../../db.js';
import { defineStatement } from '../statement.js';

export interface OperatorRow {
  id: string;
  name: string;
  role: 'viewer' | 'operator';
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

const COLUMNS = 'id, name, role, created_at, last_used_at, revoked_at';

/** A live operator of the same name makes this insert nothing (the caller reports the conflict). */
const insertOperatorStatement = defineStatement<{ id: string; name: string; role: string; tokenHash: string }, OperatorRow>(
  'dashboard_insert_operator',
  `INSERT INTO operators (id, name, role, token_hash) VALUES ($id, $name, $role, $tokenHash)
     ON CONFLICT (name) WHERE revoked_at IS NULL DO NOTHING RETURNING ${COLUMNS}`,
);

const selectOperatorsStatement = defineStatement<{ includeRevoked: boolean }, OperatorRow>(
  'dashboard_operators',
  `SELECT ${COLUMNS} FROM operators WHERE $includeRevoked::boolean OR revoked_at IS NULL ORDER BY created_at, id`,
);

const revokeOperatorStatement = defineStatement<{ idOrName: string }, OperatorRow>(
  'dashboard_revoke_operator',
  `UPDATE operators SET revoked_at = now()
     WHERE revoked_at IS NULL AND (id = $idOrName OR name = $idOrName) RETURNING ${COLUMNS}`,
);

const deleteOperatorSessions = defineStatement<{ operatorId: string }, never>(
  'dashboard_delete_operator_sessions',
  'DELETE FROM dashboard_sessions WHERE operator_id = $operatorId',
);

const operatorByTokenHashStatement = defineStatement<{ tokenHash: string }, OperatorRow>(
  'tekil_operator_by_token',
  `SELECT ${COLUMNS} FROM operators WHERE token_hash = $tokenHash AND revoked_at IS NULL`,
  'prepared',
);

const touchOperator = defineStatement<{ id: string }, never>('dashboard_touch_operator', 'UPDATE operators SET last_used_at = now() WHERE id = $id');

export async function insertOperator(db: Queryable, row: { id: string; name: string; role: string; tokenHash: string }): Promise<OperatorRow | undefined> {
  return (await insertOperatorStatement.run(db, row)).rows[0];
}

export async function selectOperators(db: Queryable, includeRevoked: boolean): Promise<OperatorRow[]> {
  return (await selectOperatorsStatement.run(db, { includeRevoked })).rows;
}

/** Revokes by id or by live name; the sessions the operator opened go with it. */
export async function revokeOperator(db: Queryable, idOrName: string): Promise<OperatorRow | undefined> {
  const { rows } = await revokeOperatorStatement.run(db, { idOrName });
  if (rows[0]) await deleteOperatorSessions.run(db, { operatorId: rows[0].id });
  return rows[0];
}

/**
 * The live operator a token hash belongs to. `last_used_at` is written at most once a minute, so a busy
 * token does not write a row on every request.
 */
export async function operatorByTokenHash(db: Queryable, tokenHash: string): Promise<OperatorRow | undefined> {
  const { rows } = await operatorByTokenHashStatement.run(db, { tokenHash });
  const found = rows[0];
  if (found && (found.last_used_at === null || Date.now() - found.last_used_at.getTime() > 60_000)) {
    await touchOperator.run(db, { id: found.id });
  }
  return found;
}

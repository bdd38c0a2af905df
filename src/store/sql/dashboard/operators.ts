import type { Queryable } from '../../db.js';

export interface OperatorRow {
  id: string;
  name: string;
  role: 'viewer' | 'operator';
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

const COLUMNS = 'id, name, role, created_at, last_used_at, revoked_at';

export async function insertOperator(db: Queryable, row: { id: string; name: string; role: string; tokenHash: string }): Promise<OperatorRow | undefined> {
  // A live operator of the same name makes this insert nothing (the caller reports the conflict).
  const { rows } = await db.query<OperatorRow>(
    `INSERT INTO operators (id, name, role, token_hash) VALUES ($1, $2, $3, $4)
     ON CONFLICT (name) WHERE revoked_at IS NULL DO NOTHING RETURNING ${COLUMNS}`,
    [row.id, row.name, row.role, row.tokenHash],
  );
  return rows[0];
}

export async function selectOperators(db: Queryable, includeRevoked: boolean): Promise<OperatorRow[]> {
  const { rows } = await db.query<OperatorRow>(
    `SELECT ${COLUMNS} FROM operators WHERE $1::boolean OR revoked_at IS NULL ORDER BY created_at, id`,
    [includeRevoked],
  );
  return rows;
}

/** Revokes by id or by live name; the sessions the operator opened go with it. */
export async function revokeOperator(db: Queryable, idOrName: string): Promise<OperatorRow | undefined> {
  const { rows } = await db.query<OperatorRow>(
    `UPDATE operators SET revoked_at = now()
     WHERE revoked_at IS NULL AND (id = $1 OR name = $1) RETURNING ${COLUMNS}`,
    [idOrName],
  );
  if (rows[0]) await db.query('DELETE FROM dashboard_sessions WHERE operator_id = $1', [rows[0].id]);
  return rows[0];
}

/**
 * The live operator a token hash belongs to. `last_used_at` is written at most once a minute, so a busy
 * token does not write a row on every request.
 */
export async function operatorByTokenHash(db: Queryable, tokenHash: string): Promise<OperatorRow | undefined> {
  const { rows } = await db.query<OperatorRow>(
    `SELECT ${COLUMNS} FROM operators WHERE token_hash = $1 AND revoked_at IS NULL`,
    [tokenHash],
    { name: 'tekil_operator_by_token' },
  );
  const found = rows[0];
  if (found && (found.last_used_at === null || Date.now() - found.last_used_at.getTime() > 60_000)) {
    await db.query('UPDATE operators SET last_used_at = now() WHERE id = $1', [found.id]);
  }
  return found;
}

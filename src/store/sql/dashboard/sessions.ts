import type { Queryable } from '../../db.js';

export interface SessionRow {
  operator_id: string | null;
  role: 'viewer' | 'operator' | 'admin';
  csrf_token: string;
  expires_at: Date;
  name: string | null;
}

export async function insertSession(
  db: Queryable,
  row: { idHash: string; operatorId: string | null; role: string; csrfToken: string; ttlMs: number },
): Promise<void> {
  // Expired sessions are swept whenever one is made: sign-ins are rare, so this costs nothing.
  await db.query('DELETE FROM dashboard_sessions WHERE expires_at < now()');
  await db.query(
    `INSERT INTO dashboard_sessions (id_hash, operator_id, role, csrf_token, expires_at)
     VALUES ($1, $2, $3, $4, now() + $5 * interval '1 millisecond')`,
    [row.idHash, row.operatorId, row.role, row.csrfToken, row.ttlMs],
  );
}

/** The live session of an id hash, with its operator's name (none for the admin token). */
export async function selectSession(db: Queryable, idHash: string): Promise<SessionRow | undefined> {
  const { rows } = await db.query<SessionRow>(
    `SELECT s.operator_id, s.role, s.csrf_token, s.expires_at, o.name
     FROM dashboard_sessions s LEFT JOIN operators o ON o.id = s.operator_id
     WHERE s.id_hash = $1 AND s.expires_at > now()`,
    [idHash],
    { name: 'tekil_dashboard_session' },
  );
  return rows[0];
}

export async function deleteSession(db: Queryable, idHash: string): Promise<void> {
  await db.query('DELETE FROM dashboard_sessions WHERE id_hash = $1', [idHash]);
}

import type { Queryable } from '../../db.js';

/** A transaction-scoped advisory lock, without waiting: true when this transaction now holds it. */
export async function tryAdvisoryLock(tx: Queryable, key: number): Promise<boolean> {
  const res = await tx.query<{ locked: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS locked', [key]);
  return res.rows[0]!.locked;
}

/** The source's last run, for the scheduler: when it started and how it ended. */
export const lastRunTimes = 'SELECT status, started_at, updated_at FROM reconcile_runs WHERE source = $1 ORDER BY id DESC LIMIT 1';

import type { InboxFilter } from '../../../inbox/filter.js';
import { queuedOnly } from '../../../inbox/filter.js';
import type { Queryable } from '../../db.js';
import { filterConditions, QUEUED_ONLY, WITH_QUEUE } from '../inbox/admin.js';

export interface JobRow {
  id: string;
  kind: 'inbox.replay' | 'inbox.discard';
  filter: Record<string, unknown>;
  status: 'running' | 'done' | 'cancelled' | 'failed';
  total: number;
  processed: number;
  changed: number;
  skipped: number;
  error: string | null;
  created_by: string;
  cancel_requested: boolean;
  created_at: Date;
  heartbeat_at: Date;
  finished_at: Date | null;
}

/** How many deliveries a filter matches now: the dry run, and a job's total. */
export async function countInboxMatching(db: Queryable, filter: InboxFilter): Promise<number> {
  const params: unknown[] = [];
  const where = filterConditions(filter, params);
  const from = queuedOnly(filter.status) ? QUEUED_ONLY : WITH_QUEUE;
  const { rows } = await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${from}${where.length ? ` WHERE ${where.join(' AND ')}` : ''}`, params);
  return Number(rows[0]?.n ?? 0);
}

export async function insertJob(db: Queryable, job: { id: string; kind: string; filter: unknown; total: number; createdBy: string }): Promise<JobRow> {
  const { rows } = await db.query<JobRow>(
    'INSERT INTO dashboard_jobs (id, kind, filter, total, created_by) VALUES ($1, $2, $3, $4, $5) RETURNING *',
    [job.id, job.kind, JSON.stringify(job.filter), job.total, job.createdBy],
  );
  return rows[0]!;
}

/** Records a batch's progress; answers whether a cancel was asked for. */
export async function recordProgress(db: Queryable, id: string, delta: { processed: number; changed: number; skipped: number }): Promise<boolean> {
  const { rows } = await db.query<{ cancel_requested: boolean }>(
    `UPDATE dashboard_jobs SET processed = processed + $2, changed = changed + $3, skipped = skipped + $4, heartbeat_at = now()
     WHERE id = $1 RETURNING cancel_requested`,
    [id, delta.processed, delta.changed, delta.skipped],
  );
return rows[0]?.cancel_requested ?? true;
}

export async function finishJob(db: Queryable, id: string, status: JobRow['status'], error: string | null): Promise<void> {
  await db.query('UPDATE dashboard_jobs SET status = $2, error = $3, finished_at = now() WHERE id = $1', [id, status, error]);
}

export async function requestCancel(db: Queryable, id: string): Promise<JobRow | undefined> {
  const { rows } = await db.query<JobRow>('UPDATE dashboard_jobs SET cancel_requested = true WHERE id = $1 RETURNING *', [id]);
  return rows[0];
}

export async function selectJob(db: Queryable, id: string): Promise<JobRow | undefined> {
  const { rows } = await db.query<JobRow>('SELECT * FROM dashboard_jobs WHERE id = $1', [id]);
  return rows[0];
}

export async function selectJobs(db: Queryable, limit: number): Promise<JobRow[]> {
  const { rows } = await db.query<JobRow>('SELECT * FROM dashboard_jobs ORDER BY created_at DESC, id DESC LIMIT $1', [limit]);
  return rows;
}

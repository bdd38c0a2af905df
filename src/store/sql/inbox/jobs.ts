import type { Queryable } from '../../db.js';
import { defineStatement } from '../statement.js';

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

const insertJobStatement = defineStatement<{ id: string; kind: string; filter: string; total: number; createdBy: string }, JobRow>(
  'dashboard_insert_job',
  'INSERT INTO dashboard_jobs (id, kind, filter, total, created_by) VALUES ($id, $kind, $filter, $total, $createdBy) RETURNING *',
);

const recordProgressStatement = defineStatement<{ id: string; processed: number; changed: number; skipped: number }, { cancel_requested: boolean }>(
  'dashboard_job_progress',
  `UPDATE dashboard_jobs SET processed = processed + $processed, changed = changed + $changed, skipped = skipped + $skipped, heartbeat_at = now()
     WHERE id = $id RETURNING cancel_requested`,
);

const finishJobStatement = defineStatement<{ id: string; status: JobRow['status']; error: string | null }, never>(
  'dashboard_finish_job',
  'UPDATE dashboard_jobs SET status = $status, error = $error, finished_at = now() WHERE id = $id',
);

const requestCancelStatement = defineStatement<{ id: string }, JobRow>(
  'dashboard_cancel_job',
  'UPDATE dashboard_jobs SET cancel_requested = true WHERE id = $id RETURNING *',
);

const selectJobStatement = defineStatement<{ id: string }, JobRow>('dashboard_job', 'SELECT * FROM dashboard_jobs WHERE id = $id');

const selectJobsStatement = defineStatement<{ limit: number }, JobRow>(
  'dashboard_jobs',
  'SELECT * FROM dashboard_jobs ORDER BY created_at DESC, id DESC LIMIT $limit',
);

export async function insertJob(db: Queryable, job: { id: string; kind: string; filter: unknown; total: number; createdBy: string }): Promise<JobRow> {
  const { rows } = await insertJobStatement.run(db, { ...job, filter: JSON.stringify(job.filter) });
  return rows[0]!;
}

/** Records a batch's progress; answers whether a cancel was asked for. */
export async function recordProgress(db: Queryable, id: string, delta: { processed: number; changed: number; skipped: number }): Promise<boolean> {
  const { rows } = await recordProgressStatement.run(db, { id, ...delta });
  return rows[0]?.cancel_requested ?? true;
}

export async function finishJob(db: Queryable, id: string, status: JobRow['status'], error: string | null): Promise<void> {
  await finishJobStatement.run(db, { id, status, error });
}

export async function requestCancel(db: Queryable, id: string): Promise<JobRow | undefined> {
  return (await requestCancelStatement.run(db, { id })).rows[0];
}

export async function selectJob(db: Queryable, id: string): Promise<JobRow | undefined> {
  return (await selectJobStatement.run(db, { id })).rows[0];
}

export async function selectJobs(db: Queryable, limit: number): Promise<JobRow[]> {
  return (await selectJobsStatement.run(db, { limit })).rows;
}

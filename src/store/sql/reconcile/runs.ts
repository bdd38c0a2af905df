import { defineStatement } from '../statement.js';

/** Every reconcile_runs statement. Runs are few (one per source and schedule), none of these is hot. */

export interface ReconcileRunRow {
  id: string;
  source: string;
  provider: string;
  window_start: Date;
  window_end: Date | null;
  apply: boolean;
  trigger: string;
  status: 'running' | 'completed' | 'failed';
  cursor: string | null;
  pages: number;
  items: number;
  error: string | null;
  resumed: number;
  started_at: Date;
  updated_at: Date;
  finished_at: Date | null;
}

export const insertRun = defineStatement<
  { source: string; provider: string; windowStart: Date; windowEnd: Date | null; apply: boolean; trigger: string },
  ReconcileRunRow
>(
  'reconcile_insert_run',
  `INSERT INTO reconcile_runs (source, provider, window_start, window_end, apply, trigger)
   VALUES ($source, $provider, $windowStart, $windowEnd, $apply, $trigger)
   RETURNING *`,
);

/**
 * The last run of a source, when it failed: a new run over the same window (or a scheduled one, whatever
 * its window) continues it from its cursor. Taken FOR UPDATE so two starts cannot both resume it.
 */
export const lastRunOfSource = defineStatement<{ source: string }, ReconcileRunRow>(
  'reconcile_last_run',
  `SELECT * FROM reconcile_runs WHERE source = $source ORDER BY id DESC LIMIT 1 FOR UPDATE`,
);

export const resumeRun = defineStatement<{ id: string; apply: boolean; trigger: string }, ReconcileRunRow>(
  'reconcile_resume_run',
  `UPDATE reconcile_runs SET status = 'running', error = NULL, resumed = resumed + 1, apply = $apply, trigger = $trigger, updated_at = now()
   WHERE id = $id RETURNING *`,
);

/** After a page: where the next one starts. Committed with the page's findings and deliveries. */
export const advanceRun = defineStatement<{ id: string; cursor: string | null; items: number }, never>(
  'reconcile_advance_run',
  `UPDATE reconcile_runs SET cursor = $cursor, pages = pages + 1, items = items + $items, updated_at = now() WHERE id = $id`,
);

export const finishRun = defineStatement<{ id: string; status: 'completed' | 'failed'; error: string | null }, never>(
  'reconcile_finish_run',
  `UPDATE reconcile_runs SET status = $status, error = $error, updated_at = now(), finished_at = now() WHERE id = $id`,
);

/** Newest first, keyset-paged by id. */
export const listRuns = defineStatement<
  { source: string | null; beforeId: string | null; limit: number },
  ReconcileRunRow & { counts: Record<string, number> }
>(
  'reconcile_list_runs',
  `SELECT r.*,
          (SELECT coalesce(jsonb_object_agg(k.kind, k.n), '{}'::jsonb)
             FROM (SELECT kind, count(*) AS n FROM reconcile_findings f WHERE f.run_id = r.id GROUP BY kind) k) AS counts
   FROM reconcile_runs r
   WHERE ($source::text IS NULL OR r.source = $source) AND ($beforeId::bigint IS NULL OR r.id < $beforeId::bigint)
   ORDER BY r.id DESC LIMIT $limit`,
);

export const runById = defineStatement<{ id: string }, ReconcileRunRow>('reconcile_run_by_id', `SELECT * FROM reconcile_runs WHERE id = $id::bigint`);

/** The source's last run, for the scheduler: when it started and how it ended. */
export const lastRunTimes = defineStatement<{ source: string }, { status: string; started_at: Date; updated_at: Date }>(
  'reconcile_last_run_times',
  'SELECT status, started_at, updated_at FROM reconcile_runs WHERE source = $source ORDER BY id DESC LIMIT 1',
);

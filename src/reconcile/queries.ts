import type { Queryable } from '../store/db.js';
import { listFindings, type FindingRow } from '../store/sql/reconcile/findings.js';
import { listRuns, type ReconcileRunRow } from '../store/sql/reconcile/runs.js';

export type RunListRow = ReconcileRunRow & { counts: Record<string, number> };

/** Stored runs, newest first; `before` is the last id of the previous page. */
export async function listRunRows(db: Queryable, filter: { source: string | null; before: string | null; limit: number }): Promise<RunListRow[]> {
  const res = await listRuns.run(db, { source: filter.source, beforeId: filter.before, limit: filter.limit });
  return res.rows;
}

/** Stored findings, newest first, by source, kind and run. */
export async function listFindingRows(
  db: Queryable,
  filter: { source: string | null; kind: string | null; runId: string | null; before: string | null; limit: number },
): Promise<FindingRow[]> {
  const res = await listFindings.run(db, { source: filter.source, kind: filter.kind, runId: filter.runId, beforeId: filter.before, limit: filter.limit });
  return res.rows;
}

import { defineStatement } from './statement.js';

/** A transaction-scoped advisory lock, without waiting: `locked` is true when this transaction now holds it. */
export const tryAdvisoryLock = defineStatement<{ key: number }, { locked: boolean }>(
  'tekil_try_advisory_xact_lock',
  'SELECT pg_try_advisory_xact_lock($key) AS locked',
);

/** The source's last run, for the scheduler: when it started and how it ended. */
export const lastRunTimes = defineStatement<{ source: string }, { status: string; started_at: Date; updated_at: Date }>(
  'reconcile_last_run_times',
  'SELECT status, started_at, updated_at FROM reconcile_runs WHERE source = $source ORDER BY id DESC LIMIT 1',
);

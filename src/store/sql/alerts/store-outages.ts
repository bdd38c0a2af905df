import { defineStatement } from '../statement.js';

/** One process's outage, written once the store answers again (migration 023). */
export const recordStoreOutage = defineStatement<{ process: string; firstFailureAt: Date; lastFailureAt: Date; failures: number }, never>(
  'tekil_alerts_record_store_outage',
  `INSERT INTO store_outages (process, first_failure_at, last_failure_at, failures)
   VALUES ($process, $firstFailureAt, $lastFailureAt, $failures)`,
);

/**
 * The outages every process reported that recovered less than `quietMs` ago, summed: the span from the
 * first failure any of them saw to the latest recovery, and the failures counted.
 */
export const recentStoreOutages = defineStatement<
  { quietMs: number; now: Date | null },
  { outages: number; failures: number; first_failure_at: Date | null; recovered_at: Date | null; processes: string[] | null }
>(
  'tekil_alerts_recent_store_outages',
  `SELECT count(*)::int AS outages, coalesce(sum(failures), 0)::int AS failures, min(first_failure_at) AS first_failure_at,
          max(recovered_at) AS recovered_at, array_agg(DISTINCT process) AS processes
   FROM store_outages WHERE recovered_at > coalesce($now::timestamptz, now()) - $quietMs * interval '1 millisecond'`,
);

/** Forgets outages older than a day: the rule's quiet period never reaches that far. `now`: null for the database's clock. */
export const forgetStoreOutages = defineStatement<{ now: Date | null }, never>(
  'tekil_alerts_forget_store_outages',
  `DELETE FROM store_outages WHERE recovered_at < coalesce($now::timestamptz, now()) - interval '1 day'`,
);

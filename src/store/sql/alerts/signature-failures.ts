import { defineStatement } from '../statement.js';

/** Adds a process's counts to the current minute of each source (migration 017). */
export const addSignatureFailures = defineStatement<{ sources: string[]; counts: number[] }, never>(
  'tekil_alerts_add_signature_failures',
  `INSERT INTO signature_failures AS s (source, minute, failures)
   SELECT x.source, date_trunc('minute', now()), x.n FROM unnest($sources::text[], $counts::int[]) AS x (source, n)
   ON CONFLICT (source, minute) DO UPDATE SET failures = s.failures + excluded.failures`,
);

/** Each source's signature failures over the last `windowMs` (whole minutes: the window's first minute counts whole). */
export const signatureFailuresInWindow = defineStatement<{ windowMs: number; now: Date | null }, { source: string; failures: number }>(
  'tekil_alerts_signature_failures_in_window',
  `SELECT source, sum(failures)::int AS failures FROM signature_failures
   WHERE minute > coalesce($now::timestamptz, now()) - $windowMs * interval '1 millisecond' - interval '1 minute' GROUP BY source`,
);

/** Forgets counts older than a day: no rule's window reaches that far. `now`: null for the database's clock. */
export const forgetSignatureFailures = defineStatement<{ now: Date | null }, never>(
  'tekil_alerts_forget_signature_failures',
  `DELETE FROM signature_failures WHERE minute < coalesce($now::timestamptz, now()) - interval '1 day'`,
);

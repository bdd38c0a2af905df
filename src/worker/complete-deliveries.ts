import { TekilError } from '../errors.js';
import type { Queryable } from '../store/db.js';
import { isValueRefusal, pgErrorCode } from '../pg-error.js';
import { savepointStatements } from '../store/sql/inbox/batch-connection.js';
import { completeDeliveriesStatement, nestloopOff } from '../store/sql/inbox/complete-deliveries.js';

/** `release`: the delivery was not started; it returns to the queue as it was before the claim. */
export type InboxDeliveryStatus = 'pending' | 'done' | 'stale' | 'dead' | 'release';

/** How one attempt ended, and what the delivery becomes. */
export interface InboxCompletion {
  /** The claimed queue row's ctid, from the claim. */
  row_ref: string;
  /** The delivery record's ctid, from the claim. */
  record_ref: string;
  /** What the delivery becomes; the attempt's outcome follows (pending: retry). */
  status: InboxDeliveryStatus;
  /** When the attempt started, epoch milliseconds. */
  started_ms: number;
  duration_ms: number;
  /** Sanitized summary; no body, no secrets. */
  error: string | null;
  /** Kept as the record's last_error when this attempt succeeds (the previous attempt was lost). */
  prior_error: string | null;
  /** For `pending`: when to try again, epoch milliseconds. */
  next_attempt_ms: number | null;
  result_ref: string | null;
}

/** The savepoint the outcomes are written behind: the batch's handler work stays if they are refused. */
const OUTCOMES_SAVEPOINT = 'tekil_outcomes';
const outcomesSavepoint = savepointStatements(OUTCOMES_SAVEPOINT);

/**
 * Writes a whole batch's outcomes in one statement (src/store/sql/inbox/complete-deliveries.ts): the
 * queue rows and the delivery records, the outcomes as one array per field. `token` is the batch's
 * claim token: only rows it still holds are written, and fewer rows written than outcomes given means
 * the batch lost some of its deliveries (LEASE_LOST: the caller rolls everything back).
 *
 * One outcome the store refuses must not roll back the whole batch (its neighbours' forwards would be
 * sent again at every retry, for ever): the statement runs behind a savepoint, and when the store
 * refuses its values the outcomes are written again one by one, each behind its own savepoint. One
 * refused on its own is recorded without what the store refused: a retry becomes `dead` (its retry
 * time is the usual culprit), and `onRefused` is told.
 */
export async function completeDeliveries(
  tx: Queryable,
  completions: readonly InboxCompletion[],
  worker: string,
  token: string,
  onRefused: (completion: InboxCompletion, err: unknown) => void = () => {},
): Promise<void> {
  if (completions.length === 0) return;
  try {
    await writeOutcomes(tx, completions, worker, token);
    return;
  } catch (err) {
    if (!isValueRefusal(err)) throw err;
    await outcomesSavepoint.rollbackTo.run(tx);
  }
  for (const completion of completions) {
    try {
      await writeOutcomes(tx, [completion], worker, token);
      await outcomesSavepoint.release.run(tx);
    } catch (err) {
      if (!isValueRefusal(err)) throw err;
      await outcomesSavepoint.rollbackTo.run(tx);
      onRefused(completion, err);
      const why = `the store refused this outcome (SQLSTATE ${pgErrorCode(err)}; e.g. a retry time beyond the timestamp range)`;
      await writeOutcomes(tx, [refusedOutcome(completion, why)], worker, token);
    }
  }
}

/** What is recorded for an outcome the store refused: no retry time, result or text of its own. */
function refusedOutcome(c: InboxCompletion, why: string): InboxCompletion {
  const status = c.status === 'pending' ? 'dead' : c.status;
  const attempt = c.error === null ? '' : `${c.error.replaceAll('\u0000', '')}; `;
  return { ...c, status, next_attempt_ms: null, result_ref: null, prior_error: null, error: status === 'dead' ? `${attempt}${why}; dead` : null };
}

/** One statement for the given outcomes, behind the savepoint OUTCOMES_SAVEPOINT. */
async function writeOutcomes(tx: Queryable, completions: readonly InboxCompletion[], worker: string, token: string): Promise<void> {
  const n = completions.length;
  const rowRefs = new Array<string>(n);
  const recordRefs = new Array<string>(n);
  const statuses = new Array<string>(n);
  const started = new Array<number>(n);
  const durations = new Array<number>(n);
  const errors = new Array<string | null>(n);
  const priorErrors = new Array<string | null>(n);
  const nextAttempts = new Array<number | null>(n);
  const resultRefs = new Array<string | null>(n);
  const settledRefs: string[] = [];
  const keptRefs: string[] = [];
  const releasedRefs: string[] = [];
  const writtenRecordRefs: string[] = [];
  for (let i = 0; i < n; i++) {
    const c = completions[i]!;
    rowRefs[i] = c.row_ref;
    recordRefs[i] = c.record_ref;
    statuses[i] = c.status;
    started[i] = c.started_ms;
    durations[i] = c.duration_ms;
    errors[i] = c.error;
    priorErrors[i] = c.prior_error;
    nextAttempts[i] = c.next_attempt_ms;
    resultRefs[i] = c.result_ref;
    if (c.status === 'release') {
      releasedRefs.push(c.row_ref);
      continue;
    }
    (c.status === 'done' || c.status === 'stale' ? settledRefs : keptRefs).push(c.row_ref);
    writtenRecordRefs.push(c.record_ref);
  }
  await outcomesSavepoint.take.run(tx);
  await nestloopOff.run(tx);
  const stmt = completeDeliveriesStatement;
  const res = await stmt.run(tx, {
    row_refs: tidArray(rowRefs),
    record_refs: tidArray(recordRefs),
    statuses,
    started_ms: started,
    durations_ms: durations,
    errors,
    prior_errors: priorErrors,
    next_attempts_ms: nextAttempts,
    result_refs: resultRefs,
    settled_refs: tidArray(settledRefs),
    kept_refs: tidArray(keptRefs),
    released_refs: tidArray(releasedRefs),
    written_record_refs: tidArray(writtenRecordRefs),
    worker,
    token,
  });
  const written = res.rows[0]!.written;
  if (written !== n) {
    throw new TekilError(
      'LEASE_LOST',
      `${n - written} of ${n} deliveries of this batch were taken back after their lease expired (or changed meanwhile); the batch is rolled back`,
    );
  }
}

/**
 * A tid[] literal from ctids as Postgres prints them ("(12,3)": digits, a comma, parentheses, never a
 * quote or backslash), joined in one go: the driver's generic array encoder escapes element by
 * element, which showed up in profiles at this size.
 */
function tidArray(refs: readonly string[]): string {
  return refs.length === 0 ? '{}' : `{"${refs.join('","')}"}`;
}

import { isTekilError, TekilError } from '../errors.js';
import { checkFixes, checkIds, checkTitles, type CheckId, type CheckResult } from './checks.js';
import { busyDuplicate, concurrent, deliver, duplicate, secondEndpoint } from './checks-delivery.js';
import { rotation, signature, timestamp } from './checks-auth.js';
import { workerKilled } from './checks-kill.js';
import { crash, order, paidAgain, reconcile, replayAfterFix, sameResource } from './checks-state.js';
import type { CheckRun } from './outcome.js';
import { ProveSession, type ProveOptions } from './session.js';

const runners: Record<CheckId, CheckRun> = {
  deliver,
  duplicate,
  concurrent,
  'busy-duplicate': busyDuplicate,
  'same-resource': sameResource,
  'paid-again': paidAgain,
  order,
  signature,
  timestamp,
  rotation,
  crash,
  'worker-killed': workerKilled,
  'replay-after-fix': replayAfterFix,
  'second-endpoint': secondEndpoint,
  reconcile,
};

export interface ProveReport {
  url: string;
  scheme: string;
  /** The run's fresh ids all start from here, so a run's traffic can be found in the receiver's logs. */
  runId: string;
  startedAt: string;
  durationMs: number;
  /** True when no row failed (skipped rows do not fail a run, and never count as passed). */
  ok: boolean;
  counts: { passed: number; failed: number; skipped: number };
  rows: CheckResult[];
}

export interface Selection {
  only?: readonly CheckId[];
  skip?: readonly CheckId[];
}

/** Parses a `--only` / `--skip` list (`duplicate,order`), naming any unknown id. */
export function parseCheckList(text: string, flag: string): CheckId[] {
  const ids = text
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
  const unknown = ids.filter((id) => !(checkIds as readonly string[]).includes(id));
  if (unknown.length) {
    throw new TekilError('VALIDATION_FAILED', `${flag}: unknown check ${unknown.map((x) => `"${x}"`).join(', ')}`, { hint: `checks: ${checkIds.join(', ')}` });
  }
  return ids as CheckId[];
}

/** A failure that stops the run: the receiver cannot be observed, so no row could be trusted. */
const stopsTheRun = (err: unknown): boolean => isTekilError(err) && (err.code === 'PROVE_EFFECTS_UNREACHABLE' || err.code === 'PROVE_EFFECTS_INVALID');

/**
 * Runs the chosen checks one after another against a live receiver (they share its control switches,
 * so never in parallel), then `reconcile` over everything they sent. The effects URL is read before
 * anything is sent: if it cannot be read the run stops with PROVE_EFFECTS_UNREACHABLE.
 */
export async function runProve(options: ProveOptions, selection: Selection = {}, onRow?: (row: CheckResult) => void): Promise<ProveReport> {
  const session = new ProveSession(options);
  const started = Date.now();
  await session.effects();
  const rows: CheckResult[] = [];
  for (const id of checkIds) {
    const base = { id, title: checkTitles[id], fix: checkFixes[id] };
    const chosen = (!selection.only?.length || selection.only.includes(id)) && !selection.skip?.includes(id);
    let row: CheckResult;
    if (!chosen) {
      row = { ...base, status: 'skipped', message: 'not chosen (--only / --skip)', figures: {}, durationMs: 0 };
    } else {
      const checkStarted = Date.now();
      try {
        const outcome = await runners[id](session);
        row = { ...base, ...outcome, durationMs: Date.now() - checkStarted };
      } catch (err) {
        if (stopsTheRun(err)) throw err;
        // Never `passed`: a check that broke half-way observed nothing it could vouch for.
        const reason = isTekilError(err) ? `${err.code}: ${err.message}` : err instanceof Error ? err.message : String(err);
        row = { ...base, status: 'failed', message: `the check could not complete: ${reason}`, figures: {}, durationMs: Date.now() - checkStarted };
      }
    }
    rows.push(row);
    onRow?.(row);
  }
  const counts = { passed: 0, failed: 0, skipped: 0 };
  for (const row of rows) counts[row.status]++;
  return {
    url: options.url,
    scheme: options.scheme,
    runId: session.runId,
    startedAt: new Date(started).toISOString(),
    durationMs: Date.now() - started,
    ok: counts.failed === 0,
    counts,
    rows,
  };
}

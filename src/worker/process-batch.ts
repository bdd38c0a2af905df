import { tracing } from '../telemetry/tracing.js';
import type { BatchDeps } from './batch-deps.js';
import { BatchDelivery } from './batch-delivery.js';
import { BatchTrace } from './batch-trace.js';
import { claimDueDeliveries, type InboxClaimedDelivery } from './claim-due-deliveries.js';
import { confirmPayments, type ConfirmVerdict } from './confirm-payments.js';
import { completeDeliveries, type InboxCompletion } from './complete-deliveries.js';
import { BatchBackend } from './handler-timeout.js';
import { PermanentError } from './handlers.js';
import { lockBatchResources } from './lock-resources.js';
import { applyOrdering, checkOrdering } from './ordering-guard.js';
import { complete, failure, release, retryPolicyOf } from './outcomes.js';
import { runForwards } from './run-forwards.js';
import { runInProcess, type HandledDelivery } from './run-handlers.js';

/** What one claim did: how many deliveries it claimed, and its forward batches that run apart from the loop. */
export interface BatchRound {
  claimed: number;
  /** Resolves when this claim's forward batches have ended (never rejects: a failed one is logged, its leases bring its deliveries back). */
  forwards: Promise<void>;
}

const NOTHING = Promise.resolve();

/**
 * Claims one batch (committed claim, so a crash leaves a lease behind), going round the sources with
 * due work (src/store/sql/inbox/claim-due-deliveries.ts), then runs it.
 *
 * On Postgres the claim is split by what waits on whom: each forwarding source's forwarded deliveries
 * run in a batch transaction of their own that the claim loop does not wait for, bounded by the
 * source's forwarding slots (src/worker/forward-slots.ts); everything else (in-process handlers,
 * deliveries settled at once) runs in the loop's batch. A forward target that answers in seconds then
 * holds its own source's batch and slots, never the loop or another source's deliveries. On the
 * embedded store (one connection, nothing runs beside the loop) the claim stays one batch.
 *
 * A batch runs inside ONE transaction that first locks its resources: in-process handlers one after
 * another, each behind its own savepoint, forwarded deliveries concurrently over HTTP, and all outcomes
 * written by a single statement before the one commit.
 *
 * A batch starts no delivery once half its lease has passed: the rest go back to the queue
 * unstarted, due at once and without using an attempt. Otherwise a slow batch (an application
 * timing out on every forward, say) would outlive its lease, lose its deliveries to another worker
 * and roll back, and its failures would never be recorded as the retries they are. The half left
 * covers the deliveries already running (a forward ends within its timeout).
 */
export async function processBatch(deps: BatchDeps, token: string): Promise<BatchRound> {
  const { db, config, slots } = deps;
  const deadline = Date.now() + config.worker.lease / 2;
  const t = tracing();
  const claimStarted = t ? Date.now() : 0;
  const reserved = slots.any ? slots.reserve() : undefined;
  let rows: InboxClaimedDelivery[];
  try {
    const claim = await claimDueDeliveries(db, { limit: deps.claimLimit, leaseMs: config.worker.lease, token, after: deps.fair.after, caps: reserved });
    deps.fair.after = claim.nextAfter;
    rows = claim.rows;
  } catch (err) {
    if (reserved) slots.settleReservation(reserved, new Map());
    throw err;
  }
  if (reserved) slots.settleReservation(reserved, countBySource(deps, rows));
  if (rows.length === 0) return { claimed: 0, forwards: NOTHING };

  const { inLoop, forwarded } = splitClaim(deps, rows);
  const detached: Array<Promise<void>> = [];
  const inline: InboxClaimedDelivery[][] = [];
  for (const group of forwarded.values()) {
    if (!slots.openGroup()) {
      inline.push(group); // as many forward batches run as may: this one runs in the loop
      continue;
    }
    const run = runGroup(deps, token, group, deadline, t ? new BatchTrace(t, claimStarted) : undefined)
      .catch((err: unknown) => {
        deps.metrics.batchErrors.inc();
        deps.logger.error({ err, workerId: deps.workerId }, 'worker forward batch failed; its deliveries return after the lease');
      })
      .finally(() => {
        slots.closeGroup();
        deps.forwardBatchEnded();
      });
    deps.detached.add(run);
    void run.finally(() => deps.detached.delete(run));
    detached.push(run);
  }
  const forwards = detached.length === 0 ? NOTHING : Promise.all(detached).then(() => {});
  const pending = inLoop.length > 0 ? [inLoop, ...inline] : inline;
  try {
    while (pending.length > 0) await runGroup(deps, token, pending.shift()!, deadline, t ? new BatchTrace(t, claimStarted) : undefined);
  } catch (err) {
    // The groups not run give their slots back now; their leases bring their deliveries back.
    for (const group of pending) for (const [source, n] of countBySource(deps, group)) slots.release(source, n);
    throw err;
  }
  return { claimed: rows.length, forwards };
}

/** The claimed rows of each source whose forwarding slots are counted. */
function countBySource(deps: BatchDeps, rows: readonly InboxClaimedDelivery[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const row of rows) if (deps.slots.counts(row.source)) counts.set(row.source, (counts.get(row.source) ?? 0) + 1);
  return counts;
}

/** The deliveries the loop's batch runs, and each forwarding source's forwarded ones (Postgres only). */
function splitClaim(deps: BatchDeps, rows: InboxClaimedDelivery[]): { inLoop: InboxClaimedDelivery[]; forwarded: Map<string, InboxClaimedDelivery[]> } {
  const forwarded = new Map<string, InboxClaimedDelivery[]>();
  if (deps.slots.maxGroups === 0) return { inLoop: rows, forwarded };
  const inLoop: InboxClaimedDelivery[] = [];
  for (const row of rows) {
    const forwards = deps.config.sources[row.source]?.forward !== undefined && !deps.handlers.resolve(row.source, row.event_type);
    if (!forwards) {
      inLoop.push(row);
      continue;
    }
    const group = forwarded.get(row.source);
    if (group) group.push(row);
    else forwarded.set(row.source, [row]);
  }
  return { inLoop, forwarded };
}

/** One batch transaction over some of a claim's deliveries; their forwarding slots are given back when it ends. */
async function runGroup(deps: BatchDeps, token: string, rows: InboxClaimedDelivery[], deadline: number, traced: BatchTrace | undefined): Promise<void> {
  try {
    // Before the batch transaction: a provider's payment lookup must not hold it open.
    const verdicts = await confirmPayments(deps, rows, deadline);
    await runBatch(deps, token, rows, deadline, traced, verdicts);
  } catch (err) {
    traced?.fail(err);
    throw err;
  } finally {
    for (const [source, n] of countBySource(deps, rows)) deps.slots.release(source, n);
  }
  traced?.end();
}

async function runBatch(
  deps: BatchDeps,
  token: string,
  rows: InboxClaimedDelivery[],
  deadline: number,
  traced: BatchTrace | undefined,
  verdicts: ReadonlyMap<string, ConfirmVerdict>,
): Promise<void> {
  const { db } = deps;
  await db.transaction(async (tx) => {
    // First, before any work: waits while another batch still holds one of these resources.
    await lockBatchResources(tx, rows);
    const { completions, handled, forwards } = await triage(deps, tx, rows, traced, verdicts);
    const [handlerCompletions, forwarded] = await Promise.all([
      runInProcess(deps, tx, new BatchBackend(db, tx), handled, deadline),
      runForwards(deps, forwards, deadline),
    ]);
    completions.push(...handlerCompletions);
    for (const { delivery, outcome } of forwarded) {
      if (!outcome) {
        completions.push(release(deps, delivery));
      } else if (outcome.ok) {
        if (delivery.verdict) await applyOrdering(tx, delivery.row, delivery.verdict);
        completions.push(complete(deps, delivery, { status: 'done', resultRef: outcome.resultRef }));
      } else {
        completions.push(
          failure(deps, delivery, new Error(outcome.error), { permanent: outcome.permanent, notBeforeMs: outcome.notBeforeMs, sanitized: true }),
        );
      }
    }
    const completeStarted = traced ? Date.now() : 0;
    await completeDeliveries(tx, completions, deps.workerId, token, (c, err) => {
      deps.logger.error({ err, rowRef: c.row_ref, status: c.status }, 'the store refused a delivery outcome; recorded without it (a retry becomes dead)');
    });
    traced?.completed(completeStarted);
  });
}

/**
 * Sorts a batch's deliveries: settled at once (lost too often, no source, nothing to run, a payment
 * the provider does not confirm, stale by the ordering guard), for an in-process handler, or to forward.
 */
async function triage(
  deps: BatchDeps,
  tx: Parameters<typeof checkOrdering>[0],
  rows: readonly InboxClaimedDelivery[],
  traced: BatchTrace | undefined,
  verdicts: ReadonlyMap<string, ConfirmVerdict>,
): Promise<{ completions: InboxCompletion[]; handled: HandledDelivery[]; forwards: BatchDelivery[] }> {
  const completions: InboxCompletion[] = [];
  const handled: HandledDelivery[] = [];
  const forwards: BatchDelivery[] = [];
  for (const row of rows) {
    const delivery = new BatchDelivery(row, deps.config.sources[row.source]);
    traced?.claimed(delivery);
    if (row.was_lost) deps.metrics.attempt(row.source, 'lost', 0);
    // A delivery whose attempts all ended with a dead worker (e.g. it crashes the process every
    // time) must not loop forever: once the lost attempts used up the budget, it is dead.
    if (row.attempts > retryPolicyOf(delivery).max_attempts) {
      completions.push(complete(deps, delivery, { status: 'dead', error: `gave up: ${row.attempts - 1} attempts used, the last one lost (worker died)` }));
      continue;
    }
    const registered = deps.handlers.resolve(row.source, row.event_type);
    if (!delivery.source) {
      completions.push(failure(deps, delivery, new PermanentError(`source ${row.source} is not configured`), { permanent: true }));
      continue;
    }
    if (!registered && !delivery.source.forward) {
      const why = `no handler registered for ${row.source} / ${row.event_type ?? '(no type)'} and no forward configured`;
      completions.push(failure(deps, delivery, new PermanentError(why), { permanent: true }));
      continue;
    }
    const confirmed = verdicts.get(row.row_ref);
    if (confirmed && confirmed.kind !== 'confirmed') {
      // A mismatch is for a person to look at (the review queue); a provider that could not be read is
      // asked again on the source's ladder; a lookup the deadline left unstarted goes back unstarted.
      if (confirmed.kind === 'unstarted') completions.push(release(deps, delivery));
      else completions.push(failure(deps, delivery, confirmed.error, { permanent: confirmed.kind === 'mismatch' }));
      continue;
    }
    const guard = deps.guards.get(row.source);
    if (guard) {
      const verdict = await checkOrdering(tx, guard, row, guard.stateOf(delivery));
      if (verdict.kind === 'stale') {
        completions.push(complete(deps, delivery, { status: 'stale', error: verdict.reason }));
        continue;
      }
      delivery.verdict = verdict;
    }
    if (registered) handled.push({ delivery, registered });
    else forwards.push(delivery);
  }
  return { completions, handled, forwards };
}

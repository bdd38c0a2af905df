import type { TekilConfig } from '../config/schema.js';
import { retrySchema, type RetryConfig, type SourceConfig } from '../config/source.js';
import { isTekilError, TekilError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Db, Queryable } from '../store/db.js';
import { claimDueDeliveries, LOST_ERROR, type InboxClaimedDelivery } from './claim-due-deliveries.js';
import { completeDeliveries, type InboxCompletion } from './complete-deliveries.js';
import type { Forwarder, ForwardOutcome } from './forward.js';
import { PermanentError, type HandlerRegistry, type HandlerResult, type InboxEvent, type RegisteredHandler } from './handlers.js';
import { applyOrdering, checkOrdering, type GuardVerdict, type OrderingGuard } from './ordering-guard.js';
import { decideRetry } from './retry-policy.js';
import { sanitizeError } from './sanitize-error.js';
import { LazySavepoint } from './savepoint.js';
import { BatchBackend, HandlerClock, runWithTimeout } from './handler-timeout.js';
import { lockBatchResources } from './lock-resources.js';
import type { WorkerMetrics } from './metrics.js';
import { failSpan, startChild, traceparentOf, tracing, type Tracing } from '../telemetry/tracing.js';
import { BatchTrace } from './batch-trace.js';
import type { Span } from '@opentelemetry/api';

export interface BatchDeps {
  db: Db;
  config: TekilConfig;
  handlers: HandlerRegistry;
  guards: ReadonlyMap<string, OrderingGuard>;
  /** One per source that forwards, built with the worker (see createForwarders). */
  forwarders: ReadonlyMap<string, Forwarder>;
  logger: Logger;
  metrics: WorkerMetrics;
  /** Recorded on every attempt (`worker` in the inbox_attempts view). */
  workerId: string;
  /** The most deliveries one batch claims (worker.batch_size, less on the embedded store). */
  claimLimit: number;
}

const defaultRetry = retrySchema.parse({});

/** One claimed delivery on its way through the batch. */
class Job {
  readonly body: Buffer;
  startedAt = Date.now();
  verdict?: Extract<GuardVerdict, { kind: 'apply' }>;
  /** With tracing on: this delivery's processing span (a child of its receive span), and how it ended. */
  span?: Span;
  outcome?: InboxCompletion['status'];
  #parsed = false;
  #payload: unknown;

  constructor(
    readonly row: InboxClaimedDelivery,
    readonly source: SourceConfig | undefined,
  ) {
    const b = row.body;
    this.body = Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  }

  /** The body parsed as JSON on first use (undefined when it is not JSON): unread, it costs nothing. */
  get payload(): unknown {
    if (!this.#parsed) {
      this.#parsed = true;
      try {
        this.#payload = JSON.parse(this.body.toString('utf8'));
      } catch {
        this.#payload = undefined; // not JSON: handlers still get the raw body
      }
    }
    return this.#payload;
  }
}

/** The handler's view of a job. */
class Event implements InboxEvent {
  readonly source: string;
  readonly eventId: string;
  readonly resourceId: string | null;
  readonly type: string | null;
  readonly occurredAt: Date | null;
  readonly receivedAt: Date;
  readonly body: Buffer;
  readonly contentType: string | null;
  readonly headers: Record<string, string>;
  readonly attempt: number;

  constructor(
    private readonly job: Job,
    private readonly validated: { payload: unknown } | undefined,
  ) {
    const r = job.row;
    this.source = r.source;
    this.eventId = r.event_id;
    this.resourceId = r.resource_id;
    this.type = r.event_type;
    this.occurredAt = r.occurred_at;
    this.receivedAt = r.received_at;
    this.body = job.body;
    this.contentType = r.content_type;
    this.headers = r.headers;
    this.attempt = r.attempts;
  }

  get payload(): unknown {
    return this.validated ? this.validated.payload : this.job.payload;
  }
}

/**
 * Claims one batch (committed claim, so a crash leaves a lease behind), then runs it inside ONE
 * transaction that first locks the batch's resources: in-process handlers one after another, each
 * behind its own savepoint, forwarded deliveries concurrently over HTTP, and all outcomes written by
 * a single statement before the one commit. Answers how many deliveries were claimed.
 *
 * A batch starts no delivery once half its lease has passed: the rest go back to the queue
 * unstarted, due at once and without using an attempt. Otherwise a slow batch (an application
 * timing out on every forward, say) would outlive its lease, lose its deliveries to another worker
 * and roll back, and its failures would never be recorded as the retries they are. The half left
 * covers the deliveries already running (a forward ends within its timeout).
 */
export async function processBatch(deps: BatchDeps, token: string): Promise<number> {
  const { db, config } = deps;
  const deadline = Date.now() + config.worker.lease / 2;
  const t = tracing();
  const claimStarted = t ? Date.now() : 0;
  const rows = await claimDueDeliveries(db, { limit: deps.claimLimit, leaseMs: config.worker.lease, token });
  if (rows.length === 0) return 0;
  const traced = t ? new BatchTrace(t, claimStarted) : undefined;
  try {
    await runBatch(deps, token, rows, deadline, traced);
  } catch (err) {
    traced?.fail(err);
    throw err;
  }
  traced?.end();
  return rows.length;
}

async function runBatch(deps: BatchDeps, token: string, rows: InboxClaimedDelivery[], deadline: number, traced: BatchTrace | undefined): Promise<void> {
  const { db, config } = deps;
  await db.transaction(async (tx) => {
    // First, before any work: waits while another batch still holds one of these resources.
    await lockBatchResources(tx, rows);
    const completions: InboxCompletion[] = [];
    const inProcess: Array<{ job: Job; registered: RegisteredHandler }> = [];
    const forwards: Job[] = [];

    for (const row of rows) {
      const job = new Job(row, config.sources[row.source]);
      traced?.claimed(job);
      if (row.was_lost) deps.metrics.attempt(row.source, 'lost', 0);
      // A delivery whose attempts all ended with a dead worker (e.g. it crashes the process every
      // time) must not loop forever: once the lost attempts used up the budget, it is dead.
      if (row.attempts > (job.source?.retry ?? defaultRetry).max_attempts) {
        completions.push(complete(deps, job, 'dead', `gave up: ${row.attempts - 1} attempts used, the last one lost (worker died)`, null));
        continue;
      }
      const registered = deps.handlers.resolve(row.source, row.event_type);
      if (!job.source) {
        completions.push(failure(deps, job, new PermanentError(`source ${row.source} is not configured`), true));
        continue;
      }
      if (!registered && !job.source.forward) {
        completions.push(
          failure(deps, job, new PermanentError(`no handler registered for ${row.source} / ${row.event_type ?? '(no type)'} and no forward configured`), true),
        );
        continue;
      }
      const guard = deps.guards.get(row.source);
      if (guard) {
        const verdict = await checkOrdering(tx, guard, row, guard.stateOf(job.payload, row.headers));
        if (verdict.kind === 'stale') {
          completions.push(complete(deps, job, 'stale', verdict.reason, null));
          continue;
        }
        job.verdict = verdict;
      }
      if (registered) inProcess.push({ job, registered });
      else forwards.push(job);
    }

    const [handled, forwarded] = await Promise.all([
      runInProcess(deps, tx, new BatchBackend(db, tx), inProcess, deadline),
      runForwards(deps, forwards, deadline),
    ]);
    completions.push(...handled);
    for (const { job, outcome } of forwarded) {
      if (!outcome) {
        completions.push(release(deps, job));
      } else if (outcome.ok) {
        if (job.verdict) await applyOrdering(tx, job.row, job.verdict);
        completions.push(complete(deps, job, 'done', null, outcome.resultRef));
      } else {
        completions.push(failure(deps, job, new Error(outcome.error), outcome.permanent, outcome.notBeforeMs, true));
      }
    }
    const completeStarted = traced ? Date.now() : 0;
    await completeDeliveries(tx, completions, deps.workerId, token, (c, err) => {
      deps.logger.error({ err, rowRef: c.row_ref, status: c.status }, 'the store refused a delivery outcome; recorded without it (a retry becomes dead)');
    });
    traced?.completed(completeStarted);
  });
}

async function runInProcess(
  deps: BatchDeps,
  tx: Queryable,
  backend: BatchBackend,
  jobs: ReadonlyArray<{ job: Job; registered: RegisteredHandler }>,
  deadline: number,
): Promise<InboxCompletion[]> {
  const out: InboxCompletion[] = [];
  const clock = new HandlerClock(deps.config.worker.handler_timeout);
  try {
    for (const { job, registered } of jobs) {
      job.startedAt = Date.now();
      if (job.startedAt > deadline) {
        out.push(release(deps, job));
        continue;
      }
      const t = job.span ? tracing() : undefined;
      const span = t && job.span ? startChild(t, job.span, 'tekil.handler') : undefined;
      const completion = span
        ? await t!.within(span, () => runHandler(deps, tx, backend, clock, job, registered))
        : await runHandler(deps, tx, backend, clock, job, registered);
      if (span) endWithOutcome(t!, span, completion);
      out.push(completion);
    }
  } finally {
    clock.stop();
  }
  return out;
}

/** One in-process delivery behind its own savepoint: validate, run the handler (timed), record the guard. */
async function runHandler(
  deps: BatchDeps,
  tx: Queryable,
  backend: BatchBackend,
  clock: HandlerClock,
  job: Job,
  registered: RegisteredHandler,
): Promise<InboxCompletion> {
  const savepoint = new LazySavepoint(tx, 'tekil_delivery', backend.learn);
  try {
    let validated: { payload: unknown } | undefined;
    if (registered.schema) {
      const parsed = registered.schema.safeParse(job.payload);
      if (!parsed.success) throw new PermanentError(`payload validation failed: ${parsed.error.message}`);
      validated = { payload: parsed.data };
    }
    const event = new Event(job, validated);
    const context = { tx: savepoint.tx, idempotencyKey: `${job.row.source}:${job.row.event_id}`, logger: deps.logger };
    const result = await runWithTimeout(() => registered.handler(event, context), clock, savepoint, backend, deps.logger);
    if (job.verdict) await applyOrdering(savepoint.tx, job.row, job.verdict);
    await savepoint.release();
    return complete(deps, job, 'done', null, resultRefOf(result));
  } catch (err) {
    try {
      await savepoint.rollback();
    } catch (rollbackErr) {
      // The connection is gone: nothing of this batch can commit. The leases bring it back.
      throw new TekilError('STORE_UNAVAILABLE', 'lost the batch transaction while rolling back a handler', { cause: rollbackErr });
    }
    if (isTekilError(err, 'HANDLER_TIMEOUT')) {
      deps.metrics.handlerTimeout(job.row.source);
      deps.logger.warn({ source: job.row.source, eventId: job.row.event_id, attempt: job.row.attempts }, err.message);
    }
    return failure(deps, job, err, err instanceof PermanentError);
  }
}

/** `outcome` undefined: not started (the batch had reached its deadline). */
async function runForwards(deps: BatchDeps, jobs: readonly Job[], deadline: number): Promise<Array<{ job: Job; outcome?: ForwardOutcome }>> {
  const results: Array<{ job: Job; outcome?: ForwardOutcome }> = [];
  let next = 0;
  const lane = async () => {
    while (next < jobs.length) {
      const job = jobs[next++]!;
      job.startedAt = Date.now();
      if (job.startedAt > deadline) {
        results.push({ job });
        continue;
      }
      const forwarder = deps.forwarders.get(job.row.source);
      // Built from the same configuration as the batch's sources, so never missing; a failure if it were.
      const t = job.span ? tracing() : undefined;
      // The forward span's traceparent goes with the request: the application's own spans join the trace.
      const span = t && job.span ? startChild(t, job.span, 'tekil.forward', { kind: t.kind.client, attributes: { 'http.request.method': 'POST' } }) : undefined;
      const outcome: ForwardOutcome = forwarder
        ? await forwarder.forward(job.row, span ? traceparentOf(span) : undefined)
        : { ok: false, permanent: false, error: `forward: no forwarder built for source ${job.row.source}` };
      if (span) {
        if (!outcome.ok) failSpan(t!, span, new Error(outcome.error));
        span.end();
      }
      results.push({ job, outcome });
    }
  };
  await Promise.all(Array.from({ length: Math.min(deps.config.worker.forward_concurrency, jobs.length) }, lane));
  return results;
}

/** A handler's span: failed when the delivery is retried or dead. */
function endWithOutcome(t: Tracing, span: Span, completion: InboxCompletion): void {
  if (completion.status === 'pending' || completion.status === 'dead') failSpan(t, span, new Error(completion.error ?? completion.status));
  span.end();
}

function resultRefOf(result: HandlerResult): string | null {
  if (typeof result === 'string') return result;
  if (result && typeof result === 'object' && result.resultRef) return String(result.resultRef);
  return null;
}

function complete(
  deps: BatchDeps,
  job: Job,
  status: InboxCompletion['status'],
  error: string | null,
  resultRef: string | null,
  nextAttemptMs: number | null = null,
): InboxCompletion {
  const duration = Date.now() - job.startedAt;
  job.outcome = status;
  deps.metrics.attempt(job.row.source, status === 'pending' ? 'retry' : status, duration);
  return {
    row_ref: job.row.row_ref,
    record_ref: job.row.record_ref,
    status,
    started_ms: job.startedAt,
    duration_ms: duration,
    error,
    prior_error: job.row.was_lost ? LOST_ERROR : null,
    next_attempt_ms: nextAttemptMs,
    result_ref: resultRef,
  };
}

/** Back to the queue unstarted: the claim's attempt is given back. */
function release(deps: BatchDeps, job: Job): InboxCompletion {
  deps.metrics.released.inc();
  job.outcome = 'release';
  return {
    row_ref: job.row.row_ref,
    record_ref: job.row.record_ref,
    status: 'release',
    started_ms: job.startedAt,
    duration_ms: 0,
    error: null,
    prior_error: null,
    next_attempt_ms: null,
    result_ref: null,
  };
}

function failure(deps: BatchDeps, job: Job, err: unknown, permanent: boolean, notBeforeMs?: number, alreadySanitized = false): InboxCompletion {
  const policy: RetryConfig = job.source?.retry ?? defaultRetry;
  const secrets = [
    ...(job.source?.secrets ?? []),
    ...Object.values(job.source?.named_secrets ?? {}),
    ...(job.source?.forward ? [job.source.forward.secret] : []),
  ];
  const summary = alreadySanitized ? (err as Error).message : sanitizeError(err, { secrets, body: job.body.toString('utf8') });
  const decision = decideRetry(policy, job.row.attempts, { permanent, notBeforeMs });
  if (decision.kind === 'dead') {
    const why = permanent ? summary : `${summary} (gave up after ${job.row.attempts} attempts)`;
    deps.logger.warn({ source: job.row.source, eventId: job.row.event_id, attempt: job.row.attempts, error: summary }, 'delivery is dead (review queue)');
    return complete(deps, job, 'dead', why, null);
  }
  deps.logger.debug(
    { source: job.row.source, eventId: job.row.event_id, attempt: job.row.attempts, error: summary, delayMs: decision.delayMs },
    'delivery will be retried',
  );
  return complete(deps, job, 'pending', summary, null, Date.now() + decision.delayMs);
}

import type { Span } from '@opentelemetry/api';
import { isTekilError, TekilError } from '../errors.js';
import type { Queryable } from '../store/db.js';
import { failSpan, startChild, tracing, type Tracing } from '../telemetry/tracing.js';
import type { BatchDeps } from './batch-deps.js';
import { HandlerEvent, type BatchDelivery } from './batch-delivery.js';
import type { InboxCompletion } from './complete-deliveries.js';
import { type BatchBackend, HandlerClock, runWithTimeout } from './handler-timeout.js';
import { PermanentError, type RegisteredHandler } from './handlers.js';
import { applyOrdering } from './ordering-guard.js';
import { complete, failure, release, resultRefOf } from './outcomes.js';
import { LazySavepoint } from './savepoint.js';

/** A delivery an in-process handler takes, and that handler. */
export interface HandledDelivery {
  delivery: BatchDelivery;
  registered: RegisteredHandler;
}

/**
 * Runs a batch's in-process handlers one after another inside the batch transaction, each behind its
 * own savepoint; a delivery not started by `deadline` goes back to the queue unstarted.
 */
export async function runInProcess(
  deps: BatchDeps,
  tx: Queryable,
  backend: BatchBackend,
  handled: readonly HandledDelivery[],
  deadline: number,
): Promise<InboxCompletion[]> {
  const out: InboxCompletion[] = [];
  const clock = new HandlerClock(deps.config.worker.handler_timeout);
  try {
    for (const { delivery, registered } of handled) {
      delivery.startedAt = Date.now();
      if (delivery.startedAt > deadline) {
        out.push(release(deps, delivery));
        continue;
      }
      const t = delivery.span ? tracing() : undefined;
      const span = t && delivery.span ? startChild(t, delivery.span, 'tekil.handler') : undefined;
      const completion = span
        ? await t!.within(span, () => runHandler(deps, tx, backend, clock, delivery, registered))
        : await runHandler(deps, tx, backend, clock, delivery, registered);
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
  delivery: BatchDelivery,
  registered: RegisteredHandler,
): Promise<InboxCompletion> {
  const savepoint = new LazySavepoint(tx, 'tekil_delivery', backend.learn);
  const row = delivery.row;
  try {
    let validated: { payload: unknown } | undefined;
    if (registered.schema) {
      const parsed = registered.schema.safeParse(delivery.payload);
      if (!parsed.success) throw new PermanentError(`payload validation failed: ${parsed.error.message}`);
      validated = { payload: parsed.data };
    }
    const event = new HandlerEvent(delivery, validated);
    const context = { tx: savepoint.tx, idempotencyKey: `${row.source}:${row.event_id}`, logger: deps.logger };
    const result = await runWithTimeout(() => registered.handler(event, context), clock, savepoint, backend, deps.logger);
    if (delivery.verdict) await applyOrdering(savepoint.tx, row, delivery.verdict);
    await savepoint.release();
    return complete(deps, delivery, { status: 'done', resultRef: resultRefOf(result) });
  } catch (err) {
    try {
      await savepoint.rollback();
    } catch (rollbackErr) {
      // The connection is gone: nothing of this batch can commit. The leases bring it back.
      throw new TekilError('STORE_UNAVAILABLE', 'lost the batch transaction while rolling back a handler', { cause: rollbackErr });
    }
    if (isTekilError(err, 'HANDLER_TIMEOUT')) {
      deps.metrics.handlerTimeout(row.source);
      deps.logger.warn({ source: row.source, eventId: row.event_id, attempt: row.attempts }, err.message);
    }
    return failure(deps, delivery, err, { permanent: err instanceof PermanentError });
  }
}

/** A handler's span: failed when the delivery is retried or dead. */
function endWithOutcome(t: Tracing, span: Span, completion: InboxCompletion): void {
  if (completion.status === 'pending' || completion.status === 'dead') failSpan(t, span, new Error(completion.error ?? completion.status));
  span.end();
}

import { retrySchema, type RetryConfig } from '../config/source.js';
import type { BatchDeps } from './batch-deps.js';
import type { BatchDelivery } from './batch-delivery.js';
import { LOST_ERROR } from './claim-due-deliveries.js';
import type { InboxCompletion } from './complete-deliveries.js';
import type { HandlerResult } from './handlers.js';
import { decideRetry } from './retry-policy.js';
import { sanitizeError } from './sanitize-error.js';

/** How a batch's attempts end: the completion each delivery's outcome becomes, counted in the metrics. */

const defaultRetry = retrySchema.parse({});

/** The retry policy of a delivery's source (the default when the source is no longer configured). */
export function retryPolicyOf(delivery: BatchDelivery): RetryConfig {
  return delivery.source?.retry ?? defaultRetry;
}

export interface Settled {
  status: InboxCompletion['status'];
  /** Sanitized summary; null on success. */
  error?: string | null;
  resultRef?: string | null;
  /** For `pending`: when to try again, epoch milliseconds. */
  nextAttemptMs?: number | null;
}

/** The attempt ended: its outcome, timed from when it started. */
export function complete(deps: BatchDeps, delivery: BatchDelivery, settled: Settled): InboxCompletion {
  const duration = Date.now() - delivery.startedAt;
  const { status } = settled;
  delivery.outcome = status;
  deps.metrics.attempt(delivery.row.source, status === 'pending' ? 'retry' : status, duration);
  return {
    row_ref: delivery.row.row_ref,
    record_ref: delivery.row.record_ref,
    status,
    started_ms: delivery.startedAt,
    duration_ms: duration,
    error: settled.error ?? null,
    prior_error: delivery.row.was_lost ? LOST_ERROR : null,
    next_attempt_ms: settled.nextAttemptMs ?? null,
    result_ref: settled.resultRef ?? null,
  };
}

/** Back to the queue unstarted: the claim's attempt is given back. */
export function release(deps: BatchDeps, delivery: BatchDelivery): InboxCompletion {
  deps.metrics.released.inc();
  delivery.outcome = 'release';
  return {
    row_ref: delivery.row.row_ref,
    record_ref: delivery.row.record_ref,
    status: 'release',
    started_ms: delivery.startedAt,
    duration_ms: 0,
    error: null,
    prior_error: null,
    next_attempt_ms: null,
    result_ref: null,
  };
}

export interface FailureOptions {
  /** Retrying cannot help: dead at once. */
  permanent: boolean;
  /** The target asked not to be tried before this (a 429's Retry-After), epoch milliseconds. */
  notBeforeMs?: number | undefined;
  /** The error's message is already free of secrets and body (a forward's outcome): used as it is. */
  sanitized?: boolean;
}

/** The attempt failed: retried on the source's policy, or dead (the review queue). */
export function failure(deps: BatchDeps, delivery: BatchDelivery, err: unknown, options: FailureOptions): InboxCompletion {
  const { permanent, notBeforeMs } = options;
  const source = delivery.source;
  const secrets = [...(source?.secrets ?? []), ...Object.values(source?.named_secrets ?? {}), ...(source?.forward ? [source.forward.secret] : [])];
  const summary = options.sanitized ? (err as Error).message : sanitizeError(err, { secrets, body: delivery.body.toString('utf8') });
  const row = delivery.row;
  const decision = decideRetry(retryPolicyOf(delivery), row.attempts, { permanent, notBeforeMs });
  if (decision.kind === 'dead') {
    const why = permanent ? summary : `${summary} (gave up after ${row.attempts} attempts)`;
    deps.logger.warn({ source: row.source, eventId: row.event_id, attempt: row.attempts, error: summary }, 'delivery is dead (review queue)');
    return complete(deps, delivery, { status: 'dead', error: why });
  }
  deps.logger.debug(
    { source: row.source, eventId: row.event_id, attempt: row.attempts, error: summary, delayMs: decision.delayMs },
    'delivery will be retried',
  );
  return complete(deps, delivery, { status: 'pending', error: summary, nextAttemptMs: Date.now() + decision.delayMs });
}

/** The local record a handler says it touched, if any. */
export function resultRefOf(result: HandlerResult): string | null {
  if (typeof result === 'string') return result;
  if (result && typeof result === 'object' && result.resultRef) return String(result.resultRef);
  return null;
}

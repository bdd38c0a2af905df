import type { PostResult } from '../http/post.js';
import { parseRetryAfter } from '../http/retry-after.js';
import { nextAttemptDelay } from './ladders.js';
import type { OutboxCompletion } from './types.js';

/** What one HTTP attempt produced, for the history and the next-attempt decision. */
export interface AttemptOutcome {
  startedAt: Date;
  durationMs: number;
  succeeded: boolean;
  statusCode: number | null;
  error: string | null;
  responseBody: string | null;
  retryAfterMs: number | undefined;
  /** The request could not be built (see PostFailure 'request'): retrying cannot help. */
  unsendable: boolean;
}

/** The answer's text as a text column can hold it: Postgres refuses NUL, which a receiver may well send. */
function storableBody(body: string | null): string | null {
  return body?.includes('\u0000') ? body.replaceAll('\u0000', '\uFFFD') : body;
}

/** Only 2xx is a success; a redirect is a failure (never followed), and so is every other answer. */
export function outcomeOf(result: PostResult): AttemptOutcome {
  const { startedAt, durationMs } = result;
  if (!result.ok) {
    return {
      startedAt,
      durationMs,
      succeeded: false,
      statusCode: null,
      error: result.error,
      responseBody: null,
      retryAfterMs: undefined,
      unsendable: result.failure === 'request',
    };
  }
  const statusCode = result.statusCode;
  if (statusCode >= 200 && statusCode < 300) {
    return {
      startedAt,
      durationMs,
      succeeded: true,
      statusCode,
      error: null,
      responseBody: storableBody(result.body),
      retryAfterMs: undefined,
      unsendable: false,
    };
  }
  const error = statusCode >= 300 && statusCode < 400 ? `redirect (HTTP ${statusCode}) not followed` : `HTTP ${statusCode}`;
  const retryAfter = result.headers['retry-after'];
  return {
    startedAt,
    durationMs,
    succeeded: false,
    statusCode,
    error,
    responseBody: storableBody(result.body),
    retryAfterMs: parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter),
    unsendable: false,
  };
}

export interface NextStepInput {
  outcome: AttemptOutcome;
  /** The ladder's gaps, or undefined when the endpoint's ladder cannot be read. */
  gapsMs: readonly number[] | undefined;
  attemptsOnLadder: number;
  timeScale: number;
  retryAfterMaxMs: number;
  /** `sending.gone_is_permanent`: a `410 Gone` fails the delivery at once. */
  goneIsPermanent?: boolean;
}

/**
 * The delivery's next status after an attempt: `succeeded`; `pending` again after the ladder's next gap
 * (or a longer Retry-After); or `failed` when the ladder is exhausted, unreadable, or the request could
 * not be built at all.
 */
export function nextStep(input: NextStepInput): { next: OutboxCompletion['next']; delayMs: number } {
  if (input.outcome.succeeded) return { next: 'succeeded', delayMs: 0 };
  if (input.outcome.unsendable || input.gapsMs === undefined) return { next: 'failed', delayMs: 0 };
  // The receiver says the resource is gone for good: retrying would only repeat the answer.
  if (input.goneIsPermanent && input.outcome.statusCode === 410) return { next: 'failed', delayMs: 0 };
  const delay = nextAttemptDelay({
    gapsMs: input.gapsMs,
    attemptsOnLadder: input.attemptsOnLadder,
    timeScale: input.timeScale,
    retryAfterMs: input.outcome.retryAfterMs,
    retryAfterMaxMs: input.retryAfterMaxMs,
  });
  return delay === undefined ? { next: 'failed', delayMs: 0 } : { next: 'pending', delayMs: delay };
}

/** How a group of finished attempts moves one endpoint's two streaks. */
export interface EndpointStreak {
  /** Failed deliveries (the disable policy): reset by a success, then `failed` added. */
  reset: boolean;
  failed: number;
  /** Failed attempts (the circuit breaker): reset by a success, then the failures after the group's last success added. */
  attemptReset: boolean;
  attemptFailed: number;
  /** The latest failed attempt's gap before the breaker's next probe. */
  probeDelayMs: number;
}

/**
 * How a group of finished deliveries moves each endpoint's failure streaks: a success resets a non-zero
 * streak; each delivery that ends `failed` adds one to the delivery streak (the disable policy counts
 * it), and each failed attempt, retried or not, one to the attempt streak (the circuit breaker).
 * Endpoints that need no change are left out.
 */
export function endpointStreaks(batch: readonly OutboxCompletion[]): Map<string, EndpointStreak> {
  const streaks = new Map<string, EndpointStreak>();
  for (const c of batch) {
    if (c.succeeded && !c.endpointHadFailures) continue;
    const s = streaks.get(c.endpointId) ?? { reset: false, failed: 0, attemptReset: false, attemptFailed: 0, probeDelayMs: 0 };
    if (c.succeeded) {
      s.reset = true;
      s.attemptReset = true;
      s.attemptFailed = 0;
    } else {
      if (c.next === 'failed') s.failed++;
      s.attemptFailed++;
      s.probeDelayMs = c.probeDelayMs;
    }
    streaks.set(c.endpointId, s);
  }
  return streaks;
}

/**
 * The wait before the breaker's next probe: the ladder's shortest gap (its first, on every preset),
 * scaled like every gap. The breaker only spaces its probes; each delivery keeps its own schedule
 * (src/outbox/breaker-hold.ts), so a probe never waits for a gap longer than any delivery's next one,
 * and a new message to a receiver that came back is tried within that gap. `failedInRow` and
 * `threshold` are kept for the callers; the spacing no longer grows with the streak.
 */
export function probeDelay(gapsMs: readonly number[] | undefined, _failedInRow: number, _threshold: number, timeScale: number): number {
  if (gapsMs === undefined || gapsMs.length === 0) return 60_000 * timeScale;
  return Math.min(...gapsMs) * timeScale;
}

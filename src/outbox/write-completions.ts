import type { Queryable } from '../store/db.js';
import { completeAttempts } from '../store/sql/outbox/complete-attempts.js';
import { endpointStreaks } from './attempt-decision.js';
import { newEventId } from './ids.js';
import type { OutboxCompletion } from './types.js';

/** Writes one group of finished attempts (src/store/sql/outbox/complete-attempts.ts: one statement). */
export async function writeCompletions(
  db: Queryable,
  batch: readonly OutboxCompletion[],
  dispatcher: string,
  disableAfter: number,
  breakerFailures = 0,
  announceExhausted = false,
): Promise<void> {
  // Rare (a delivery given up), so the common group pays one filter and eight empty arrays.
  const exhausted = announceExhausted ? batch.filter((c) => c.next === 'failed') : [];
  const streaks = endpointStreaks(batch);
  const streakIds = [...streaks.keys()];
  await completeAttempts.run(db, {
    tenant_ids: batch.map((c) => c.tenantId),
    ids: batch.map((c) => c.deliveryId),
    leases: batch.map((c) => c.lease),
    nexts: batch.map((c) => c.next),
    delays_ms: batch.map((c) => c.delayMs),
    status_codes: batch.map((c) => c.statusCode),
    errors: batch.map((c) => c.error),
    message_ids: batch.map((c) => c.messageId),
    endpoint_ids: batch.map((c) => c.endpointId),
    attempts: batch.map((c) => c.attempt),
    urls: batch.map((c) => c.url),
    started_ms: batch.map((c) => c.startedAt.getTime()),
    durations_ms: batch.map((c) => c.durationMs),
    succeeded: batch.map((c) => c.succeeded),
    response_bodies: batch.map((c) => c.responseBody),
    dispatcher,
    streak_endpoint_ids: streakIds,
    streak_resets: streakIds.map((id) => streaks.get(id)!.reset),
    streak_failures: streakIds.map((id) => streaks.get(id)!.failed),
    disable_after: disableAfter,
    streak_attempt_resets: streakIds.map((id) => streaks.get(id)!.attemptReset),
    streak_attempt_failures: streakIds.map((id) => streaks.get(id)!.attemptFailed),
    streak_probe_delays_ms: streakIds.map((id) => streaks.get(id)!.probeDelayMs),
    breaker_failures: breakerFailures,
    exhausted_ids: exhausted.map((c) => c.deliveryId),
    exhausted_event_ids: exhausted.map(() => newEventId()),
    exhausted_message_ids: exhausted.map((c) => c.messageId),
    exhausted_endpoint_ids: exhausted.map((c) => c.endpointId),
    exhausted_attempts: exhausted.map((c) => c.attempt),
    exhausted_urls: exhausted.map((c) => c.url),
    exhausted_status_codes: exhausted.map((c) => c.statusCode),
    exhausted_errors: exhausted.map((c) => c.error),
  });
}

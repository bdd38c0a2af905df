import type { Span } from '@opentelemetry/api';
import type { SendingConfig } from '../config/sending.js';
import { traceparentOf, tracing } from '../telemetry/tracing.js';
import { nextStep, probeDelay, type AttemptOutcome } from './attempt-decision.js';
import { type DispatcherCaches, schemeExtraHeaders, signingInput } from './dispatcher-caches.js';
import { endDispatchSpan, startDispatchSpan } from './dispatch-span.js';
import { deliveryEventId, withEventId } from './ids.js';
import type { Sender } from './sender.js';
import type { BrokerSender } from './broker-send.js';
import { brokerKindOf } from '../destinations/broker-url.js';
import type { OutboxClaimedDelivery, OutboxCompletion } from './types.js';

export interface AttemptDeps {
  sender: Sender;
  /** Endpoints of a broker kind (docs/destinations.md) publish through it instead of posting. */
  brokers: BrokerSender;
  caches: DispatcherCaches;
  sending: SendingConfig;
}

/**
 * One attempt: signs, posts and decides what comes next; never throws: whatever goes wrong is recorded
 * as the attempt's error. Answers undefined, sending nothing, for a paced delivery that could not start
 * within `sending.rate_limit_margin` of its send time (`sendAt`, epoch ms).
 */
export async function runAttempt(
  deps: AttemptDeps,
  row: OutboxClaimedDelivery,
  lease: string,
  sendAt: number | undefined,
): Promise<OutboxCompletion | undefined> {
  const { caches, sending } = deps;
  const stored = Buffer.from(row.payload.buffer, row.payload.byteOffset, row.payload.byteLength);
  // An endpoint with `event_id: delivery` sees this delivery's own id, in the headers and the body.
  const eventId = row.event_id_mode === 'delivery' ? deliveryEventId(row.message_id, row.id) : row.message_id;
  const body = eventId === row.message_id ? stored : withEventId(stored, row.message_id, eventId);
  const t = tracing();
  let outcome: AttemptOutcome;
  let span: Span | undefined;
  try {
    const material = await caches.secretsFor(row.endpoint_id, row.endpoint_updated_ms);
    const headers = caches.scheme(row.scheme, row.scheme_options_json).sign({ body, ...signingInput(row.scheme, material), id: eventId });
    Object.assign(headers, schemeExtraHeaders({ scheme: row.scheme, event_type: row.event_type, message_id: eventId }));
    // Checked last before the request is written, so that nothing in between adds to its lateness.
    if (sendAt !== undefined && Date.now() - sendAt > sending.rate_limit_margin) return undefined;
    if (t) {
      // Started here, so a paced delivery that waited is not counted; its traceparent goes with the request.
      span = startDispatchSpan(t, row);
      headers.traceparent = traceparentOf(span);
    }
    // A broker endpoint's stored URL names its kind by its scheme; the message carries the same
    // signature headers an HTTP request would, and the event id as the broker's deduplication key.
    outcome = brokerKindOf(row.url)
      ? await deps.brokers.send(
          { endpointId: row.endpoint_id, updatedAtMs: row.endpoint_updated_ms, tenantId: row.tenant_id, timeoutMs: row.timeout_ms },
          { id: eventId, type: row.event_type, body, contentType: 'application/json', headers },
        )
      : await deps.sender.send({ url: row.url, body, headers, timeoutMs: row.timeout_ms, tenantId: row.tenant_id });
  } catch (err) {
    outcome = {
      startedAt: new Date(),
      durationMs: 0,
      succeeded: false,
      statusCode: null,
      error: `not sent: ${(err as Error).message}`,
      responseBody: null,
      retryAfterMs: undefined,
      unsendable: false,
    };
  }
  if (t && span) endDispatchSpan(t, span, outcome);
  const { next, delayMs } = nextStep({
    outcome,
    gapsMs: outcome.succeeded ? [] : caches.ladder(row.ladder_json),
    attemptsOnLadder: row.attempt - row.ladder_base,
    timeScale: sending.time_scale,
    retryAfterMaxMs: sending.retry_after_max,
    goneIsPermanent: sending.gone_is_permanent,
  });
  return {
    tenantId: row.tenant_id,
    deliveryId: Number(row.id),
    lease,
    messageId: row.message_id,
    endpointId: row.endpoint_id,
    attempt: row.attempt,
    url: row.url,
    endpointHadFailures: row.consecutive_failures > 0 || row.failed_attempts_in_row > 0,
    probeDelayMs: outcome.succeeded
      ? 0
      : probeDelay(caches.ladder(row.ladder_json), row.failed_attempts_in_row + 1, sending.circuit_breaker.failures, sending.time_scale),
    startedAt: outcome.startedAt,
    durationMs: outcome.durationMs,
    succeeded: outcome.succeeded,
    statusCode: outcome.statusCode,
    error: outcome.error,
    responseBody: outcome.responseBody,
    next,
    delayMs,
  };
}

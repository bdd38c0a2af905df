import type { Span } from '@opentelemetry/api';
import { failSpan, type Tracing } from '../telemetry/tracing.js';
import type { AttemptOutcome } from './attempt-decision.js';
import type { OutboxClaimedDelivery } from './types.js';

/**
 * One dispatch attempt's span (tracing on only): a child of the message's publish span when the
 * message was published traced, so every attempt of a message, retries included, reads in the
 * publisher's trace. The URL is named by its host only: a query string may carry a token.
 */
export function startDispatchSpan(t: Tracing, row: OutboxClaimedDelivery): Span {
  let host = '';
  try {
    host = new URL(row.url).host;
  } catch {
    // not a URL: the attempt fails as unsendable, and the span says so
  }
  return t.tracer.startSpan(
    'tekil.dispatch',
    {
      kind: t.kind.client,
      attributes: {
        'tekil.message_id': row.message_id,
        'tekil.endpoint_id': row.endpoint_id,
        'tekil.event_type': row.event_type,
        'tekil.attempt': row.attempt,
        'http.request.method': 'POST',
        'server.address': host,
      },
    },
    t.contextFrom(row.traceparent),
  );
}

export function endDispatchSpan(t: Tracing, span: Span, outcome: AttemptOutcome): void {
  if (outcome.statusCode !== null) span.setAttribute('http.response.status_code', outcome.statusCode);
  if (!outcome.succeeded) failSpan(t, span, new Error(outcome.error ?? 'failed'));
  span.end();
}

import { failSpan, startChild, traceparentOf, tracing } from '../telemetry/tracing.js';
import type { BatchDeps } from './batch-deps.js';
import type { BatchDelivery } from './batch-delivery.js';
import type { ForwardOutcome } from './forward.js';

/** A forwarded delivery and how its request ended; `outcome` undefined: not started (the batch had reached its deadline). */
export interface ForwardResult {
  delivery: BatchDelivery;
  outcome?: ForwardOutcome;
}

/**
 * Forwards a batch's deliveries over HTTP, `worker.forward_concurrency` requests at a time; a delivery
 * not started by `deadline` is answered without an outcome (it goes back to the queue unstarted).
 */
export async function runForwards(deps: BatchDeps, deliveries: readonly BatchDelivery[], deadline: number): Promise<ForwardResult[]> {
  const results: ForwardResult[] = [];
  let next = 0;
  const lane = async () => {
    while (next < deliveries.length) {
      const delivery = deliveries[next++]!;
      delivery.startedAt = Date.now();
      if (delivery.startedAt > deadline) {
        results.push({ delivery });
        continue;
      }
      results.push({ delivery, outcome: await forwardOne(deps, delivery) });
    }
  };
  await Promise.all(Array.from({ length: Math.min(deps.config.worker.forward_concurrency, deliveries.length) }, lane));
  return results;
}

async function forwardOne(deps: BatchDeps, delivery: BatchDelivery): Promise<ForwardOutcome> {
  const forwarder = deps.forwarders.get(delivery.row.source);
  // Built from the same configuration as the batch's sources, so never missing; a failure if it were.
  const t = delivery.span ? tracing() : undefined;
  // The forward span's traceparent goes with the request: the application's own spans join the trace.
  const span =
    t && delivery.span ? startChild(t, delivery.span, 'tekil.forward', { kind: t.kind.client, attributes: { 'http.request.method': 'POST' } }) : undefined;
  const outcome: ForwardOutcome = forwarder
    ? await forwarder.forward(delivery.row, span ? traceparentOf(span) : undefined)
    : { ok: false, permanent: false, error: `forward: no forwarder built for source ${delivery.row.source}` };
  if (span) {
    if (!outcome.ok) failSpan(t!, span, new Error(outcome.error));
    span.end();
  }
  return outcome;
}

import { Counter, Histogram, type Registry } from 'prom-client';
import { cachedChildren } from '../metrics.js';

/** The dispatcher's metrics; several dispatchers in one process (tests) share the registry's. */
export interface DispatcherMetrics {
  attempt(succeeded: boolean, durationMs: number): void;
}

const none: DispatcherMetrics = { attempt: () => {} };

export function dispatcherMetrics(registry: Registry | undefined): DispatcherMetrics {
  if (!registry) return none;
  const attemptsTotal =
    (registry.getSingleMetric('tekil_outbox_attempts_total') as Counter<'result'> | undefined) ??
    new Counter({ name: 'tekil_outbox_attempts_total', help: 'Delivery attempts by result', labelNames: ['result'], registers: [registry] });
  const attemptSeconds =
    (registry.getSingleMetric('tekil_outbox_attempt_duration_seconds') as Histogram | undefined) ??
    new Histogram({ name: 'tekil_outbox_attempt_duration_seconds', help: 'Duration of delivery attempts', registers: [registry] });
  // Counted once per attempt: the two children are looked up once, not hashed on every call.
  const byResult = cachedChildren(attemptsTotal);
  const success = byResult('success');
  const failure = byResult('failure');
  return {
    attempt(succeeded, durationMs) {
      (succeeded ? success : failure).inc();
      attemptSeconds.observe(durationMs / 1000);
    },
  };
}

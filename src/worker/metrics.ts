import { Counter, Histogram, type Registry } from 'prom-client';
import { cachedChildren } from '../metrics.js';

/** The worker's Prometheus metrics, one set per registry. */
export class WorkerMetrics {
  readonly attempts: Counter<'source' | 'outcome'>;
  readonly attemptSeconds: Histogram<'source'>;
  readonly batchErrors: Counter;
  readonly released: Counter;
  readonly handlerTimeouts: Counter<'source'>;
  readonly confirms: Counter<'source' | 'outcome'>;
  // Label lookups hash their arguments; the hot path reuses one child per label set.
  private readonly attemptCounter: (source: string, outcome: string) => { inc(): void };
  private readonly attemptTimer: (source: string) => { observe(v: number): void };
  private readonly timeoutCounter: (source: string) => { inc(): void };

  constructor(registry: Registry) {
    this.attempts = new Counter({
      name: 'tekil_inbox_attempts_total',
      help: 'Processing attempts by source and outcome (done, retry, dead, stale, lost).',
      labelNames: ['source', 'outcome'],
      registers: [registry],
    });
    this.attemptSeconds = new Histogram({
      name: 'tekil_inbox_attempt_seconds',
      help: 'Duration of one processing attempt (handler or forward), by source.',
      labelNames: ['source'],
      buckets: [0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30],
      registers: [registry],
    });
    this.batchErrors = new Counter({
      name: 'tekil_worker_batch_errors_total',
      help: 'Batches whose transaction failed (their deliveries come back when the lease expires).',
      registers: [registry],
    });
    this.released = new Counter({
      name: 'tekil_worker_released_total',
      help: 'Deliveries a batch returned to the queue unstarted because it had used half its lease.',
      registers: [registry],
    });
    this.handlerTimeouts = new Counter({
      name: 'tekil_worker_handler_timeouts_total',
      help: 'In-process handler attempts abandoned after worker.handler_timeout, by source (each is also a retry).',
      labelNames: ['source'],
      registers: [registry],
    });
    this.confirms = new Counter({
      name: 'tekil_inbox_confirm_total',
      help: 'Payments read back from the provider before the effect, by source and outcome (confirmed, mismatch, lookup_failed, unstarted).',
      labelNames: ['source', 'outcome'],
      registers: [registry],
    });
    this.attemptCounter = cachedChildren(this.attempts);
    this.timeoutCounter = cachedChildren(this.handlerTimeouts);
    this.attemptTimer = cachedChildren(this.attemptSeconds);
  }

  attempt(source: string, outcome: string, durationMs: number): void {
    this.attemptCounter(source, outcome).inc();
    this.attemptTimer(source).observe(durationMs / 1000);
  }

  handlerTimeout(source: string): void {
    this.timeoutCounter(source).inc();
  }
}

const byRegistry = new WeakMap<Registry, WorkerMetrics>();

export function workerMetrics(registry: Registry): WorkerMetrics {
  let m = byRegistry.get(registry);
  if (!m) {
    m = new WorkerMetrics(registry);
    byRegistry.set(registry, m);
  }
  return m;
}

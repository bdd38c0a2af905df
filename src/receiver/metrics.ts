import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { cachedChildren } from '../metrics.js';
import { MinuteCounts } from './minute-counts.js';

export type DeliveryOutcome = 'accepted' | 'duplicate';

/** The receiver's Prometheus metrics, one set per registry (the app and the batcher share it). */
export class ReceiverMetrics {
  readonly deliveries: Counter<'source' | 'outcome' | 'reason'>;
  readonly ackSeconds: Histogram<'source'>;
  readonly batchRows: Histogram;
  readonly flushErrors: Counter;
  readonly bodyBytesInFlight: Gauge;
  /** Reads the bytes held now (set by the route, which owns the bound). */
  private readBodyBytes: () => number = () => 0;
  /** The same answers per minute for the last day (the dashboard's chart); this process's only. */
  readonly perMinute = new MinuteCounts();
  // Label lookups hash their arguments; the hot path reuses one child per label set.
  private readonly deliveriesBy: (source: string, outcome: string, reason: string) => { inc(): void };
  private readonly ackSecondsBy: (source: string) => { observe(v: number): void };

  constructor(registry: Registry) {
    this.deliveries = new Counter({
      name: 'tekil_inbox_deliveries_total',
      help: 'Deliveries answered by POST /in/:source, by source, outcome (accepted, duplicate, rejected) and rejection reason (an error code).',
      labelNames: ['source', 'outcome', 'reason'],
      registers: [registry],
    });
    this.ackSeconds = new Histogram({
      name: 'tekil_inbox_ack_seconds',
      help: 'Time from request to 2xx acknowledgement (after the row is committed), by source.',
      labelNames: ['source'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    });
    this.batchRows = new Histogram({
      name: 'tekil_inbox_batch_rows',
      help: 'Rows per group-commit INSERT.',
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024],
      registers: [registry],
    });
    this.flushErrors = new Counter({
      name: 'tekil_inbox_flush_errors_total',
      help: 'Group-commit INSERTs that failed (each then fell back to per-row inserts or answered 503).',
      registers: [registry],
    });
    const metrics = this;
    this.bodyBytesInFlight = new Gauge({
      name: 'tekil_inbox_body_bytes_in_flight',
      help: 'Webhook body bytes held now, being received or waiting for their commit (bounded by receiver.in_flight_max_bytes).',
      registers: [registry],
      collect() {
        this.set(metrics.readBodyBytes());
      },
    });
    this.deliveriesBy = cachedChildren(this.deliveries);
    this.ackSecondsBy = cachedChildren(this.ackSeconds);
  }

  watchBodyBytes(read: () => number): void {
    this.readBodyBytes = read;
  }

  observeAck(source: string, seconds: number): void {
    this.ackSecondsBy(source).observe(seconds);
  }

  /**
   * Signature failures per source since the last drain, for the alerts' signature_failures rule
   * (src/receiver/signature-failures.ts adds them to the store). Only configured sources reach the
   * signature check, so the map stays as small as the configuration.
   */
  readonly signatureFailures = new Map<string, number>();

  count(source: string, outcome: DeliveryOutcome | 'rejected', reason = ''): void {
    this.deliveriesBy(source, outcome, reason).inc();
    this.perMinute.add(outcome);
    if (reason.startsWith('SIGNATURE_')) this.signatureFailures.set(source, (this.signatureFailures.get(source) ?? 0) + 1);
  }
}

const bySource = new WeakMap<Registry, ReceiverMetrics>();

export function receiverMetrics(registry: Registry): ReceiverMetrics {
  let m = bySource.get(registry);
  if (!m) {
    m = new ReceiverMetrics(registry);
    bySource.set(registry, m);
  }
  return m;
}

import type { Span } from '@opentelemetry/api';
import { failSpan, startChild, type Tracing } from '../telemetry/tracing.js';
import type { InboxClaimedDelivery } from './claim-due-deliveries.js';
import type { InboxCompletion } from './complete-deliveries.js';

/** What the batch trace reads and writes of a claimed delivery on its way through the batch. */
export interface TracedJob {
  readonly row: InboxClaimedDelivery;
  span?: Span;
  outcome?: InboxCompletion['status'];
}

/**
 * A batch's spans, with tracing on. Each delivery gets its own `tekil.process` span, a child of the
 * receive span whose traceparent was stored with it, so its trace runs from the provider's POST to its
 * effect. The claim and the completion are one statement for the whole batch: each delivery's trace
 * gets a `tekil.claim` and a `tekil.complete` span of that statement's times.
 */
export class BatchTrace {
  private readonly jobs: TracedJob[] = [];
  private readonly claimEnded = Date.now();

  constructor(
    readonly t: Tracing,
    private readonly claimStarted: number,
  ) {}

  claimed(job: TracedJob): void {
    const r = job.row;
    const attributes = { 'tekil.source': r.source, 'tekil.event_id': r.event_id, 'tekil.attempt': r.attempts };
    job.span = this.t.tracer.startSpan(
      'tekil.process',
      { kind: this.t.kind.consumer, startTime: this.claimStarted, attributes: r.event_type ? { ...attributes, 'tekil.event_type': r.event_type } : attributes },
      this.t.contextFrom(r.headers.traceparent),
    );
    startChild(this.t, job.span, 'tekil.claim', { startTime: this.claimStarted }).end(this.claimEnded);
    this.jobs.push(job);
  }

  completed(started: number): void {
    const ended = Date.now();
    for (const job of this.jobs) {
      if (job.span) startChild(this.t, job.span, 'tekil.complete', { startTime: started, attributes: { 'tekil.outcome': job.outcome ?? 'none' } }).end(ended);
    }
  }

  /** After the commit: each delivery's outcome is settled. */
  end(): void {
    for (const job of this.jobs) {
      job.span?.setAttribute('tekil.outcome', job.outcome ?? 'none');
      job.span?.end();
    }
  }

  /** The batch's transaction failed: nothing of it was recorded (the leases bring the deliveries back). */
  fail(err: unknown): void {
    for (const job of this.jobs) {
      if (!job.span) continue;
      failSpan(this.t, job.span, err);
      job.span.end();
    }
  }
}

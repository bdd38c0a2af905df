import type { Logger } from '../logger.js';
import type { Queryable } from '../store/db.js';
import { CompletionsNotRecorded, recordCompletions, type RecordCompletionsOptions } from './record-completions.js';
import type { OutboxCompletion } from './types.js';

/** Completion writers that may run at once (each on its own connection). */
const FLUSH_WRITERS = 2;
/**
 * Finished attempts are written in groups of about this many, or after FLUSH_DELAY_MS: each statement
 * costs Postgres a commit and a fixed overhead, which a group of a few rows repeats for every few
 * deliveries.
 */
export const FLUSH_GROUP = 100;
const FLUSH_DELAY_MS = 5;

export interface CompletionWriterOptions {
  sql: Queryable;
  logger: Logger;
  record: Omit<RecordCompletionsOptions, 'onRefused'>;
  /** Wait before writing again after the store failed (`dispatcher.poll_interval`). */
  retryMs: number;
  /** False once the dispatcher stops: a failed write is not retried then. */
  running(): boolean;
  /** A written pending retry, due in `delayMs`. */
  onRetryScheduled(delayMs: number): void;
  /** A group was written (endpoint slots and tenant shares freed), or a writer ended. */
  onWritten(): void;
}

/** The dispatcher's finished attempts, written in groups by up to two overlapping writers. */
export class CompletionWriter {
  private readonly completions: OutboxCompletion[] = [];
  /** Writers running; two overlap so recording never waits a full round trip. */
  private flushing = 0;
  private flushTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: CompletionWriterOptions) {}

  /** Attempts not yet written, or being written. */
  get busy(): boolean {
    return this.flushing > 0 || this.completions.length > 0;
  }

  get idleWithWork(): boolean {
    return this.flushing === 0 && this.completions.length > 0;
  }

  push(completion: OutboxCompletion): void {
    this.completions.push(completion);
    this.schedule();
  }

  cancelTimer(): void {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
  }

  /** Writes at once when a full group is waiting, else shortly, so more finished attempts share it. */
  schedule(): void {
    if (this.completions.length >= FLUSH_GROUP || !this.options.running()) {
      this.flush();
    } else if (!this.flushTimer) {
      this.flushTimer = setTimeout(() => {
        this.flushTimer = undefined;
        this.flush();
      }, FLUSH_DELAY_MS);
    }
  }

  flush(): void {
    if (this.flushing >= FLUSH_WRITERS || this.completions.length === 0) return;
    this.flushing++;
    let abandoned = false;
    const { sql, logger } = this.options;
    void (async () => {
      while (this.completions.length > 0) {
        const batch = this.completions.splice(0, 1000);
        let recorded: OutboxCompletion[];
        try {
          recorded = await recordCompletions(sql, batch, {
            ...this.options.record,
            onRefused: (c, err) =>
              logger.error(
                { err, deliveryId: c.deliveryId, endpointId: c.endpointId },
                'dispatcher: the store refused an attempt; its delivery is recorded as failed',
              ),
          });
        } catch (err) {
          const unwritten = err instanceof CompletionsNotRecorded ? err.unwritten : batch;
          logger.warn({ err, attempts: unwritten.length }, 'dispatcher: recording attempts failed; retrying');
          this.completions.unshift(...unwritten);
          if (!this.options.running()) {
            // Stopping (the pool may be closed already): no retry, or this would loop for ever.
            // The leases run out and the deliveries are retried elsewhere.
            abandoned = true;
            return;
          }
          await new Promise((r) => setTimeout(r, this.options.retryMs));
          continue;
        }
        for (const c of recorded) if (c.next === 'pending') this.options.onRetryScheduled(c.delayMs);
        // The written rows freed their endpoints' slots: refill them while the next group is written.
        this.options.onWritten();
        if (this.options.running() && this.completions.length < FLUSH_GROUP) break; // a small rest waits for company
      }
    })().finally(() => {
      this.flushing--;
      if (this.completions.length > 0 && !abandoned) this.schedule();
      this.options.onWritten();
    });
  }
}

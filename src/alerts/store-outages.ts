import { hostname } from 'node:os';
import type { Registry } from 'prom-client';
import type { Context, Service } from '../service.js';
import { recordStoreOutage } from '../store/sql/alerts/store-outages.js';

/** How often a process with an outage to report tries to write it. */
const REPORT_MS = 5_000;

/** One process's view of an outage: when its store calls started failing, the latest, how many. */
export interface StoreOutage {
  firstFailureAt: Date;
  lastFailureAt: Date;
  failures: number;
}

/**
 * Counts, in memory, the store's failures this process saw: the store cannot record them while it is
 * down. Cheap enough for any path (a comparison and two assignments), and only ever called on failure.
 */
export class StoreOutageTracker {
  private current: StoreOutage | undefined;

  /** One failed store call (a 503 STORE_UNAVAILABLE answer, a failed evaluator round). */
  note(at = new Date()): void {
    if (this.current) {
      this.current.lastFailureAt = at;
      this.current.failures++;
    } else {
      this.current = { firstFailureAt: at, lastFailureAt: at, failures: 1 };
    }
  }

  /** The outage not yet reported, taken (a failed report gives it back with `restore`). */
  take(): StoreOutage | undefined {
    const taken = this.current;
    this.current = undefined;
    return taken;
  }

  /** Gives back an outage whose report failed, merged with failures counted meanwhile. */
  restore(outage: StoreOutage): void {
    const meanwhile = this.current;
    this.current = meanwhile
      ? { firstFailureAt: outage.firstFailureAt, lastFailureAt: meanwhile.lastFailureAt, failures: outage.failures + meanwhile.failures }
      : outage;
  }
}

const trackers = new WeakMap<Registry, StoreOutageTracker>();

/** The process's tracker (one per metrics registry, as the receiver's counters are). */
export function storeOutages(registry: Registry): StoreOutageTracker {
  let tracker = trackers.get(registry);
  if (!tracker) {
    tracker = new StoreOutageTracker();
    trackers.set(registry, tracker);
  }
  return tracker;
}

/**
 * Writes this process's outage to the store once the store answers again: every few seconds while one
 * is pending, nothing at all otherwise. The write that succeeds is the recovery's time; the evaluator
 * turns the rows into the store_unreachable incident (src/alerts/rules.ts).
 */
export function createStoreOutageReporter(ctx: Context, options: { reportMs?: number } = {}): Service & { report(): Promise<boolean> } {
  const tracker = storeOutages(ctx.metrics);
  const process = `${hostname()}:${globalThis.process.pid}`;
  let timer: NodeJS.Timeout | undefined;

  /** True when an outage was written. */
  async function report(): Promise<boolean> {
    const outage = tracker.take();
    if (!outage) return false;
    try {
      await recordStoreOutage.run(ctx.db, { process, ...outage });
      ctx.logger.warn({ ...outage }, 'the store is answering again after an outage; recorded for the store_unreachable alert');
      return true;
    } catch {
      // Still down: kept, and not counted as one more failure (the reporter's own tries are no requests).
      tracker.restore(outage);
      return false;
    }
  }

  return {
    name: 'store-outages',
    report,
    async start() {
      timer = setInterval(() => void report(), options.reportMs ?? REPORT_MS);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
    },
  };
}

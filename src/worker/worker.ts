import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { retrySchema } from '../config/source.js';
import type { Context, Service } from '../service.js';
import { completeDeliveries, type Completion } from './complete-deliveries.js';
import { HandlerRegistry } from './handlers.js';
import { workerMetrics } from './metrics.js';
import { compileOrderingGuard, type OrderingGuard } from './ordering-guard.js';
import { processBatch, type BatchDeps } from './process-batch.js';
import { decideRetry } from './retry-policy.js';
import { selectExpiredLeases } from './sweep-expired-leases.js';

import { INBOX_CHANNEL } from './channel.js';

export interface WorkerOptions {
  handlers?: HandlerRegistry | undefined;
  /** Overrides the id recorded on attempts (default: host:pid:random). */
  workerId?: string;
}

export interface InboxWorker extends Service {
  /** Runs one batch now (tests and benchmarks); answers how many deliveries it claimed. */
  runOnce(): Promise<number>;
  /** Takes back deliveries whose lease expired; answers how many. */
  sweepExpiredLeases(): Promise<number>;
}

/** A promise that resolves on the next wake-up or after `ms`, whichever comes first. */
class Wakeup {
  #waiters: Array<() => void> = [];
  #pending = false;

  notify(): void {
    this.#pending = true;
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w();
  }

  wait(ms: number): Promise<void> {
    if (this.#pending) {
      this.#pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const self = this;
      function done() {
        clearTimeout(timer);
        self.#waiters = self.#waiters.filter((w) => w !== done);
        self.#pending = false;
        resolve();
      }
      this.#waiters.push(done);
    });
  }
}

/**
 * The processing service: `concurrency` claim loops (one on PGlite, which is one connection), woken by
 * NOTIFY on inbox inserts with polling as the fallback, and a sweeper that takes back deliveries of
 * workers that died mid-batch once their lease expires.
 */
export function createInboxWorker(ctx: Context, options: WorkerOptions = {}): InboxWorker {
  const { config, db, logger } = ctx;
  const workerId = options.workerId ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const guards = new Map<string, OrderingGuard>();
  for (const [name, source] of Object.entries(config.sources)) {
    if (source.ordering) guards.set(name, compileOrderingGuard(source.ordering));
  }
  const metrics = workerMetrics(ctx.metrics);
  const deps: BatchDeps = { db, config, handlers: options.handlers ?? new HandlerRegistry(), guards, logger, metrics, workerId };
  const wakeup = new Wakeup();
  const loops = db.kind === 'pglite' ? 1 : config.worker.concurrency;
  let batchSeq = 0;
  let running = false;
  let unlisten: (() => Promise<void>) | undefined;
  let sweepTimer: NodeJS.Timeout | undefined;
  const tasks: Array<Promise<void>> = [];

  const runOnce = () => processBatch(deps, `${workerId}:${++batchSeq}`);

  async function sweepExpiredLeases(): Promise<number> {
    return db.transaction(async (tx) => {
      const expired = await selectExpiredLeases(tx, 500);
      const now = new Date().toISOString();
      const completions: Completion[] = expired.map((row) => {
        const policy = config.sources[row.source]?.retry ?? retrySchema.parse({});
        const decision = decideRetry(policy, row.attempts, { permanent: false });
        const error = `lease expired: worker ${row.locked_by ?? '?'} did not finish (crashed or lost its connection)`;
        return {
          source: row.source,
          event_id: row.event_id,
          status: decision.kind === 'dead' ? 'dead' : 'pending',
          outcome: 'lost',
          attempt: row.attempts,
          started_at: (row.claimed_at ?? new Date()).toISOString(),
          duration_ms: row.claimed_at ? Date.now() - row.claimed_at.getTime() : 0,
          error,
          next_attempt_at: decision.kind === 'retry' ? new Date(Date.now() + decision.delayMs).toISOString() : now,
          result_ref: null,
        };
      });
      await completeDeliveries(tx, completions, workerId);
      for (const c of completions) metrics.attempt(c.source, 'lost', c.duration_ms);
      if (completions.length) logger.warn({ count: completions.length }, 'took back deliveries whose lease expired');
      return completions.length;
    });
  }

  async function loop(): Promise<void> {
    let failures = 0;
    while (running) {
      try {
        const claimed = await runOnce();
        failures = 0;
        if (claimed >= config.worker.batch_size) continue; // more may be due: no wait
        await wakeup.wait(config.worker.poll_interval);
      } catch (err) {
        failures++;
        metrics.batchErrors.inc();
        logger.error({ err, workerId }, 'worker batch failed; its deliveries return after the lease');
        // Back off while the store is down instead of spinning.
        await wakeup.wait(Math.min(config.worker.poll_interval * 2 ** Math.min(failures, 5), 30_000));
      }
    }
  }

  return {
    name: 'worker',
    runOnce,
    sweepExpiredLeases,
    async start() {
      running = true;
      try {
        unlisten = await db.listen(INBOX_CHANNEL, () => wakeup.notify());
      } catch (err) {
        logger.warn({ err }, 'LISTEN failed; the worker polls only');
      }
      const sweepEvery = Math.max(100, Math.min(config.worker.lease / 2, 30_000));
      sweepTimer = setInterval(() => {
        sweepExpiredLeases().then(
          (n) => n > 0 && wakeup.notify(),
          (err: unknown) => logger.warn({ err }, 'lease sweep failed'),
        );
      }, sweepEvery);
      sweepTimer.unref();
      for (let i = 0; i < loops; i++) tasks.push(loop());
      logger.info({ workerId, loops, handlers: deps.handlers.size }, 'worker started');
    },
    async stop() {
      running = false;
      if (sweepTimer) clearInterval(sweepTimer);
      for (let i = 0; i < loops; i++) wakeup.notify();
      await Promise.all(tasks);
      await unlisten?.().catch(() => {});
    },
  };
}

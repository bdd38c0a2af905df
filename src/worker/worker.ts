import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Context, Service } from '../service.js';
import { HandlerRegistry } from './handlers.js';
import { workerMetrics } from './metrics.js';
import { createForwarders } from './forward.js';
import { compileOrderingGuard, type OrderingGuard } from './ordering-guard.js';
import type { BatchDeps } from './batch-deps.js';
import { ForwardSlots } from './forward-slots.js';
import { processBatch } from './process-batch.js';
import { embeddedPacing, serverPacing, type IngestActivity } from './embedded-pacing.js';
import { embeddedQueueVacuum, EMBEDDED_VACUUM_EVERY } from './embedded-vacuum.js';

import { INBOX_CHANNEL } from '../store/sql/inbox/notify.js';
import { WakeLoop } from '../store/wake-loop.js';

export interface WorkerOptions {
  handlers?: HandlerRegistry | undefined;
  /** Overrides the id recorded on attempts (default: host:pid:random). */
  workerId?: string;
  /** The receiver in the same process, if any: on the embedded store the worker gives way to it. */
  ingest?: IngestActivity | undefined;
  /** On the embedded store, deliveries claimed between two VACUUMs of the queue (embedded-vacuum.ts). */
  embeddedVacuumEvery?: number | undefined;
}

export interface InboxWorker extends Service {
  /** Runs one batch now (tests and benchmarks); answers how many deliveries it claimed. */
  runOnce(): Promise<number>;
}

/**
 * The processing service: `concurrency` claim loops (one on PGlite, which is one connection), woken by
 * NOTIFY on inbox inserts and replays, with polling as the fallback. Deliveries of a worker that died
 * mid-batch are claimed again by any worker once their lease expires.
 */
export function createInboxWorker(ctx: Context, options: WorkerOptions = {}): InboxWorker {
  const { config, db, logger } = ctx;
  const workerId = options.workerId ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const guards = new Map<string, OrderingGuard>();
  for (const [name, source] of Object.entries(config.sources)) {
    if (source.ordering) guards.set(name, compileOrderingGuard(source.ordering));
  }
  // Built now, not on a batch's first forward: a forward policy that cannot be built (an allowed
  // network that is not one) stops startup instead of failing every batch that holds its deliveries.
  let forwarders = createForwarders(config);
  let forwardersClosed = false;
  const metrics = workerMetrics(ctx.metrics);
  // On the embedded store the worker shares one thread and one connection with the receiver (see embedded-pacing.ts).
  const pacing = db.kind === 'pglite' ? embeddedPacing(config.worker.batch_size, options.ingest) : serverPacing(config.worker.batch_size);
  const queueVacuum = db.kind === 'pglite' ? embeddedQueueVacuum(db, logger, options.embeddedVacuumEvery ?? EMBEDDED_VACUUM_EVERY) : undefined;
  const deps: BatchDeps = {
    db,
    config,
    handlers: options.handlers ?? new HandlerRegistry(),
    guards,
    forwarders,
    logger,
    metrics,
    workerId,
    claimLimit: pacing.claimLimit,
    fair: { after: '' },
    // Forward batches run beside the loops on Postgres, each holding a pooled connection: at most half
    // the pool, so the loops (and the receiver, in one process) keep theirs. On the embedded store (one
    // connection) a claim stays one batch in its loop.
    slots: new ForwardSlots(config, db.kind === 'pglite' ? 0 : Math.max(1, Math.floor(config.store.pool_size / 2))),
    detached: new Set(),
    forwardBatchEnded: () => claims.wake(),
  };
  const loops = db.kind === 'pglite' ? 1 : config.worker.concurrency;
  let batchSeq = 0;
  let leaseTimer: NodeJS.Timeout | undefined;

  /** One claim and its batches, forward batches included (tests and benchmarks). */
  const runOnce = async () => {
    const round = await processBatch(deps, `${workerId}:${++batchSeq}`);
    await round.forwards;
    return round.claimed;
  };

  const claims = new WakeLoop(db, {
    channel: INBOX_CHANNEL,
    pollIntervalMs: config.worker.poll_interval,
    concurrency: loops,
    async run({ slept }) {
      if (slept) await pacing.afterWakeup();
      const started = performance.now();
      // The loop waits for its own batch, not for the forward batches of slow targets (process-batch.ts).
      const { claimed } = await processBatch(deps, `${workerId}:${++batchSeq}`);
      const full = claimed >= pacing.claimLimit;
      await pacing.afterBatch(performance.now() - started, full);
      await queueVacuum?.afterBatch(claimed, !full);
      return full; // more may be due: no wait
    },
    onError(err, failures) {
      metrics.batchErrors.inc();
      logger.error({ err, workerId }, 'worker batch failed; its deliveries return after the lease');
      // Back off while the store is down instead of spinning.
      return Math.min(config.worker.poll_interval * 2 ** Math.min(failures, 5), 30_000);
    },
    onListenFailed: (err, retryInMs) => logger.warn({ err, retryInMs }, 'LISTEN failed; the worker polls until it is set up'),
  });

  return {
    name: 'worker',
    runOnce,
    async start() {
      if (forwardersClosed) {
        // Started again after stop(): stop closed the forward connections.
        forwarders = createForwarders(config);
        deps.forwarders = forwarders;
        forwardersClosed = false;
      }
      await claims.start();
      // Expired leases need no sweeper (the claim takes them back), but nothing notifies when one
      // expires: wake once per lease so they are found even when polling is slow.
      leaseTimer = setInterval(() => claims.wake(), Math.max(50, config.worker.lease));
      leaseTimer.unref();
      logger.info({ workerId, loops, handlers: deps.handlers.size }, 'worker started');
    },
    async stop() {
      if (leaseTimer) clearInterval(leaseTimer);
      await claims.stop();
      await Promise.all([...deps.detached]);
      forwardersClosed = true;
      await Promise.all([...forwarders.values()].map((f) => f.close().catch(() => {})));
    },
  };
}

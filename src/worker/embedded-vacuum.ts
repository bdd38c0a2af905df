import { performance } from 'node:perf_hooks';
import type { Logger } from '../logger.js';
import type { Db } from '../store/db.js';

/**
 * Vacuums the delivery queue on the embedded store. PGlite runs no autovacuum, and every settled
 * delivery deletes its row of `inbox_queue`: without VACUUM the table and its indexes kept the space
 * of every row ever queued, about 280 bytes per delivery for ever (an empty queue took 45 MB of heap
 * and 15 MB of indexes after 160,000 deliveries). On Postgres autovacuum does this (migration 009
 * tunes it for the queue).
 *
 * The worker calls `afterBatch` after each batch; once `every` deliveries have been claimed since the
 * last VACUUM and a batch found fewer than it could take (the queue has just drained, so it is small
 * and VACUUM takes milliseconds: about 10 ms on PGlite after 20,000 deliveries, and it gives the empty
 * pages back), it runs `VACUUM inbox_queue`. It holds the store's one connection meanwhile, as a batch
 * does. A failure is logged and tried again after the next `every` deliveries.
 */
export const EMBEDDED_VACUUM_EVERY = 10_000;

export interface QueueVacuum {
  afterBatch(claimed: number, drained: boolean): Promise<void>;
}

export function embeddedQueueVacuum(db: Db, logger: Logger, every = EMBEDDED_VACUUM_EVERY): QueueVacuum {
  let claimedSince = 0;
  return {
    async afterBatch(claimed, drained) {
      claimedSince += claimed;
      if (!drained || claimedSince < every) return;
      claimedSince = 0;
      const started = performance.now();
      try {
        await db.exec('VACUUM inbox_queue');
        logger.debug({ ms: Math.round(performance.now() - started) }, 'vacuumed the delivery queue (embedded store)');
      } catch (err) {
        logger.warn({ err }, 'vacuuming the delivery queue failed (embedded store); tried again later');
      }
    },
  };
}

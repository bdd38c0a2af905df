import { performance } from 'node:perf_hooks';
import type { Logger } from '../logger.js';
import type { Db } from '../store/db.js';
import { queueSizeUpTo, vacuumInboxQueue } from '../store/sql/inbox/vacuum.js';

/**
 * Vacuums the delivery queue on the embedded store. PGlite runs no autovacuum, and every settled
 * delivery deletes its row of `inbox_queue`: without VACUUM the table and its indexes kept the space
 * of every row ever queued, about 280 bytes per delivery for ever (an empty queue took 45 MB of heap
 * and 15 MB of indexes after 160,000 deliveries). On Postgres autovacuum does this (migration 009
 * tunes it for the queue).
 *
 * The worker calls `afterBatch` after each batch; once `every` deliveries have been claimed since the
 * last VACUUM and a batch found fewer than it could take, it runs `VACUUM inbox_queue` if the queue
 * holds fewer than SMALL_QUEUE rows. A batch that is not full does not prove the queue small (one
 * resource's backlog is claimed one delivery at a time; retries waiting for their time and parked
 * deliveries stay queued), and VACUUM holds the store's one connection for as long as it takes, so it
 * runs when there is little to read: about 10 ms on PGlite after 20,000 deliveries, giving the empty
 * pages back. A failure is logged and tried again after the next `every` deliveries.
 */
export const EMBEDDED_VACUUM_EVERY = 10_000;
const SMALL_QUEUE = 10_000;

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
        const { rows } = await queueSizeUpTo.run(db, { cap: SMALL_QUEUE });
        if (rows[0]!.n >= SMALL_QUEUE) return;
        await vacuumInboxQueue.run(db);
        logger.debug({ ms: Math.round(performance.now() - started) }, 'vacuumed the delivery queue (embedded store)');
      } catch (err) {
        logger.warn({ err }, 'vacuuming the delivery queue failed (embedded store); tried again later');
      }
    },
  };
}

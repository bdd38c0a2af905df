import { defineStatement, type NoParams } from '../statement.js';

/** How many rows the inbox queue holds, counted up to `$cap` only (the embedded store's vacuum asks whether it is small). */
export const queueSizeUpTo = defineStatement<{ cap: number }, { n: number }>(
  'tekil_inbox_queue_size_up_to',
  'SELECT count(*)::int AS n FROM (SELECT 1 FROM inbox_queue LIMIT $cap::int) q',
);

/**
 * Gives the inbox queue's dead rows back to the embedded store (it runs no autovacuum): see
 * src/worker/embedded-vacuum.ts. Never inside a transaction, which VACUUM refuses.
 */
export const vacuumInboxQueue = defineStatement<NoParams, never>('tekil_inbox_vacuum_queue', 'VACUUM inbox_queue');

// The store-only ceiling of receiving: the receiver's own INSERT statement with the same rows in the
// same batch sizes, back to back, without HTTP. What the store allows; tekil's HTTP figure is compared to it.
import { performance } from 'node:perf_hooks';
import type { Db } from '../../src/store/db.js';
import { insertDeliveries, type InboxDeliveryRow } from '../../src/store/sql/inbox/insert-deliveries.js';

export interface StoreOnlyResult {
  rowsPerSecond: number;
  /** Mean wall time of one INSERT, ms. */
  batchMs: number;
  /** The slowest INSERT, ms (on PGlite a checkpoint runs inside the statement that triggers it). */
  maxBatchMs: number;
  /** CPU of this process per row, µs (for PGlite this is the store's own work). */
  nodeUs: number;
  /** Rows inserted (the next run starts after them). */
  written: number;
}

/**
 * Inserts `rows` in batches of `batchRows`, `inFlight` INSERTs at a time (the receiver's max_in_flight),
 * until the rows run out or `seconds` pass; answers rows per second and time per batch.
 */
export async function storeOnly(
  db: Db,
  rows: readonly InboxDeliveryRow[],
  options: { batchRows: number; inFlight: number; seconds: number },
): Promise<StoreOnlyResult> {
  const { batchRows, inFlight, seconds } = options;
  let next = 0;
  let written = 0;
  let batches = 0;
  let batchTime = 0;
  let maxBatchMs = 0;
  const deadline = performance.now() + seconds * 1000;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < rows.length && performance.now() < deadline) {
        const batch = rows.slice(next, next + batchRows);
        next += batch.length;
        const b0 = performance.now();
        await insertDeliveries(db, batch); // as the receiver sends it
        const ms = performance.now() - b0;
        batchTime += ms;
        maxBatchMs = Math.max(maxBatchMs, ms);
        batches++;
        written += batch.length;
      }
    }),
  );
  const elapsed = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return { rowsPerSecond: written / elapsed, batchMs: batchTime / batches, maxBatchMs, nodeUs: (cpu.user + cpu.system) / written, written: next };
}

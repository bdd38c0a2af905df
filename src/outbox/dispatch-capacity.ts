import { totalmem } from 'node:os';
import { getHeapStatistics } from 'node:v8';

/**
 * Memory one open request may cost a dispatcher, on the safe side. `npm run bench:fair` holds 800
 * requests open at receivers that answer in 8 s and prints the process's RSS next to the same process
 * with one request open: the difference was within the noise of a few megabytes (docs/performance.md,
 * "Fair sending"), i.e. a few KiB a request (a socket, a parser, a timer, the body); 64 KiB leaves room
 * for answers kept (4 KiB) and TLS buffers.
 */
export const BYTES_PER_OPEN_REQUEST = 64 * 1024;
const FLOOR = 256;
const CEILING = 20_000;

/**
 * `sending.dispatcher.concurrency: auto`: requests one dispatcher keeps open at once. A request waiting
 * for a slow receiver costs a socket and a little memory, not a slot others wait for, so the cap is set
 * by memory: a quarter of the smaller of the V8 heap limit and an eighth of the machine's memory, over
 * BYTES_PER_OPEN_REQUEST, between 256 and 20,000.
 */
export function autoConcurrency(): number {
  const budget = Math.min(getHeapStatistics().heap_size_limit / 4, totalmem() / 8);
  return Math.max(FLOOR, Math.min(CEILING, Math.floor(budget / BYTES_PER_OPEN_REQUEST)));
}

/** The dispatcher's request caps, resolved from the settings. */
export interface Capacity {
  /** Requests in flight at once in this process. */
  requests: number;
  /** Of those, requests to slow endpoints (the slow lane). */
  slow: number;
}

export function resolveCapacity(concurrency: number | 'auto', slowMaxInFlight: number | undefined): Capacity {
  const requests = concurrency === 'auto' ? autoConcurrency() : concurrency;
  // By default the slow lane may hold a quarter of the requests: the rest are always free for endpoints
  // that answer in time.
  const slow = Math.max(1, Math.min(requests, slowMaxInFlight ?? Math.ceil(requests / 4)));
  return { requests, slow };
}

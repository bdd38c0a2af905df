import type { TekilConfig } from '../config/schema.js';
import type { Logger } from '../logger.js';
import type { Db } from '../store/db.js';
import type { Forwarder } from './forward.js';
import type { ForwardSlots } from './forward-slots.js';
import type { HandlerRegistry } from './handlers.js';
import type { WorkerMetrics } from './metrics.js';
import type { OrderingGuard } from './ordering-guard.js';

/** What a batch needs of its worker: built once by createInboxWorker, shared by its claim loops. */
export interface BatchDeps {
  db: Db;
  config: TekilConfig;
  handlers: HandlerRegistry;
  guards: ReadonlyMap<string, OrderingGuard>;
  /** One per source that forwards, built with the worker (see createForwarders). */
  forwarders: ReadonlyMap<string, Forwarder>;
  logger: Logger;
  metrics: WorkerMetrics;
  /** Recorded on every attempt (`worker` in the inbox_attempts view). */
  workerId: string;
  /** The most deliveries one batch claims (worker.batch_size, less on the embedded store). */
  claimLimit: number;
  /** The round robin over sources: the source the last claim ended on, shared by the claim loops. */
  fair: { after: string };
  /** Each forwarding source's slots in this process (src/worker/forward-slots.ts). */
  slots: ForwardSlots;
  /** Forward batches running apart from the loops: stop() waits for them. */
  detached: Set<Promise<void>>;
  /** A forward batch ended: its source's slots are free again, so a claim may take more of its rows. */
  forwardBatchEnded: () => void;
}

import type { Context } from '../service.js';
import { InboxBatcher } from './batcher.js';
import { receiverMetrics } from './metrics.js';

/** The batcher configured from `receiver:` settings, with the process's metrics and logger. */
export function createInboxBatcher(ctx: Context, overrides: { maxInFlight?: number } = {}): InboxBatcher {
  const r = ctx.config.receiver;
  return new InboxBatcher(ctx.db, {
    maxRows: r.batch_max_rows,
    maxBytes: r.batch_max_bytes,
    queueMaxRows: r.queue_max_rows,
    queueMaxBytes: r.queue_max_bytes,
    maxInFlight: overrides.maxInFlight ?? r.max_in_flight,
    metrics: receiverMetrics(ctx.metrics),
    logger: ctx.logger.child({ service: 'inbox-batcher' }),
  });
}

import { z } from 'zod';
import { durationMs } from '../config/units.js';
import { endpointHealth, failedOutboxDeliveries, inboxPerMinute, receiverSnapshot, reviewQueueSize } from '../dashboard/stats.js';
import { tenantHealthPage } from '../tenants/health.js';
import { tenantId } from '../tenants/tenants.js';
import type { Context } from '../service.js';
import type { ApiRoutes } from './route-spec.js';
import { someObject } from './answers.js';

const DAY_MS = 86_400_000;
/** A window of a minute to a day: per-minute rows stay under 1,441 and every query reads one day at most. */
const windowField = durationMs.pipe(z.number().min(60_000, 'expected at least 1m').max(DAY_MS, 'expected at most 24h')).default(3_600_000);
const inboxStatsQuery = z.object({ window: windowField, source: z.string().min(1).max(255).optional() }).strict();
const windowQuery = z.object({ window: windowField }).strict();
const tenantsQuery = z
  .object({
    q: z.string().max(255).optional(),
    after: tenantId.optional(),
    limit: z.coerce.number().int().positive().max(100).default(50),
    window: windowField,
  })
  .strict();

/** The numbers the dashboard's overview shows, from the store (and this process's metrics where only they know). */
export function statsRoutes(routes: ApiRoutes, ctx: Context): void {
  const tag = 'stats';
  routes.add(
    {
      method: 'GET',
      url: '/stats/inbox',
      tag,
      summary:
        "Per minute: received, done, stale and dead inbound deliveries; this process's receiver: accepted, duplicate and rejected (totals and per minute) and acknowledgement latency",
      response: someObject,
      permission: 'view',
      query: inboxStatsQuery,
    },
    async ({ query }) => {
      // One "now" for both, so the stored and the receiver's minutes are the same minutes.
      const now = new Date();
      return {
        window_ms: query.window,
        minutes: await inboxPerMinute(ctx.db, query.window, query.source, now),
        review_queue: await reviewQueueSize(ctx.db),
        receiver: (await receiverSnapshot(ctx.metrics, query.window, now)) ?? null,
      };
    },
  );
  routes.add(
    {
      method: 'GET',
      url: '/stats/outbox',
      tag,
      summary: 'Per endpoint: attempts, success rate, latency p50/p99, last success and failing since, in the window; and failed deliveries',
      response: someObject,
      permission: 'view',
      query: windowQuery,
    },
    async ({ query }) => ({
      window_ms: query.window,
      endpoints: await endpointHealth(ctx.db, query.window),
      failed_deliveries: await failedOutboxDeliveries(ctx.db),
    }),
  );
  routes.add(
    {
      method: 'GET',
      url: '/stats/tenants',
      tag,
      summary:
        'Tenants in id order (`q` searches id and name, `after` pages on, at most 100), each with its endpoints, failing endpoints, success rate of the deliveries attempted in the window, and deliveries pending and failed',
      response: someObject,
      permission: 'view',
      query: tenantsQuery,
    },
    async ({ query }) =>
      tenantHealthPage(
        ctx.db,
        { q: query.q, after: query.after, limit: query.limit, windowMs: query.window },
        { endpointFailing: ctx.config.alerts.rules.endpoint_failing, breakerFailures: ctx.config.sending.circuit_breaker.failures },
      ),
  );
}

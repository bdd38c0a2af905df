import { z } from 'zod';
import { discardDelivery, inboxStatuses, listInbox, replayDelivery, replayMatching, showDelivery, type InboxFilter } from '../inbox/index.js';
import { resourceTimeline } from '../inbox/timeline.js';
import type { Context } from '../service.js';
import type { ApiRoutes } from './route-spec.js';
import { someObject } from './answers.js';

/**
 * An ISO 8601 time with an offset, in years 1 to 9999 once in UTC: outside them the database drivers
 * write dates Postgres refuses (year 0) or reads differently (five-digit years).
 */
const time = z.iso
  .datetime({ offset: true })
  .transform((s) => new Date(s))
  .refine((d) => d.getUTCFullYear() >= 1 && d.getUTCFullYear() <= 9999, 'must fall in the years 1 to 9999 (UTC)');
/** Longer than any id or name tekil stores: a longer value can match nothing. */
const MAX_TEXT = 1024;
/**
 * A text field that ends up in a query: checked here, so that what Postgres would refuse (a NUL byte)
 * or silently change (a lone UTF-16 surrogate becomes U+FFFD on the wire) is a 400.
 */
const text = z
  .string()
  .min(1)
  .max(MAX_TEXT)
  .refine((s) => !s.includes('\u0000') && !/\p{Cs}/u.test(s), 'must be text without NUL bytes or unpaired surrogates');

const filterFields = {
  status: z.enum(inboxStatuses).optional(),
  source: text.optional(),
  type: text.optional(),
  resource_id: text.optional(),
  event_id: text.optional(),
  min_attempts: z.coerce.number().int().min(0).max(1_000_000).optional(),
  since: time.optional(),
  until: time.optional(),
};
const listQuery = z.object({ ...filterFields, limit: z.coerce.number().int().min(1).max(500).default(50), cursor: z.string().optional() }).strict();
/** The inbox list's filter alone (exports, bulk jobs). */
export const inboxFilterQuery = z.object(filterFields).strict();
const bulkReplayBody = z.object({ ...filterFields, force: z.boolean().default(false) }).strict();
const replayBody = z.object({ force: z.boolean().default(false) }).strict();
const deliveryParams = z.object({ source: text, event_id: text });
const timelineParams = z.object({ resource_id: text });
const timelineQuery = z.object({ source: text.optional() }).strict();

export function toFilter(q: z.infer<typeof inboxFilterQuery>): InboxFilter {
  return {
    status: q.status,
    source: q.source,
    type: q.type,
    resourceId: q.resource_id,
    eventId: q.event_id,
    minAttempts: q.min_attempts,
    since: q.since,
    until: q.until,
  };
}

/**
 * The receiving side's admin API: list and filter deliveries (the review queue is `status=dead`),
 * show one with its attempts, replay one or many, discard.
 */
export function inboxRoutes(routes: ApiRoutes, ctx: Context): void {
  const db = ctx.db;
  const tag = 'inbox';

  routes.add(
    {
      method: 'GET',
      url: '/inbox',
      tag,
      summary: 'List inbound deliveries, newest first, by filter and cursor',
      response: z.object({ items: z.array(someObject), next_cursor: z.string().nullable() }),
      permission: 'view',
      query: listQuery,
    },
    async ({ query: q }) => listInbox(db, toFilter(q), { limit: q.limit, cursor: q.cursor }),
  );

  routes.add(
    {
      method: 'GET',
      url: '/inbox/:source/:event_id',
      tag,
      summary: 'Show one delivery with its body, headers and attempts',
      response: someObject,
      permission: 'view',
      params: deliveryParams,
    },
    async ({ params: p }) => showDelivery(db, p.source, p.event_id),
  );

  routes.add(
    {
      method: 'POST',
      url: '/inbox/replay',
      tag,
      summary: 'Replay every delivery matching the filter (dead ones unless force)',
      response: z.object({ replayed: z.number() }),
      permission: 'operate',
      body: bulkReplayBody,
    },
    async ({ body }) => ({ replayed: await replayMatching(db, toFilter(body), body.force) }),
  );

  routes.add(
    {
      method: 'POST',
      url: '/inbox/:source/:event_id/replay',
      tag,
      summary: 'Replay one delivery',
      response: someObject,
      permission: 'operate',
      params: deliveryParams,
      body: replayBody,
    },
    async ({ params: p, body }) => replayDelivery(db, p.source, p.event_id, body.force),
  );

  routes.add(
    {
      method: 'POST',
      url: '/inbox/:source/:event_id/discard',
      tag,
      summary: 'Discard one delivery from the review queue',
      response: someObject,
      permission: 'operate',
      params: deliveryParams,
    },
    async ({ params: p }) => discardDelivery(db, p.source, p.event_id),
  );

  routes.add(
    {
      method: 'GET',
      url: '/resources/:resource_id/timeline',
      tag,
      summary: "Every delivery of one resource in provider order: applied, stale (and the ordering guard's reason) or open",
      response: someObject,
      permission: 'view',
      params: timelineParams,
      query: timelineQuery,
    },
    async ({ params, query }) => resourceTimeline(db, params.resource_id, query.source),
  );
}

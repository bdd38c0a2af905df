import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { TekilError } from '../errors.js';
import { discardDelivery, inboxStatuses, listInbox, replayDelivery, replayMatching, showDelivery, type InboxFilter } from '../inbox/index.js';
import type { Context } from '../service.js';
import { parseInput } from '../validation.js';

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
  since: time.optional(),
  until: time.optional(),
};
const listQuery = z
  .object({ ...filterFields, limit: z.coerce.number().int().min(1).max(500).default(50), cursor: z.string().optional() })
  .strict();
const bulkReplayBody = z.object({ ...filterFields, force: z.boolean().default(false) }).strict();
const replayBody = z.object({ force: z.boolean().default(false) }).strict();
const deliveryParams = z.object({ source: text, event_id: text });

function toFilter(q: z.infer<typeof bulkReplayBody> | z.infer<typeof listQuery>): InboxFilter {
  return { status: q.status, source: q.source, type: q.type, resourceId: q.resource_id, since: q.since, until: q.until };
}

/**
 * The receiving side's admin API: list and filter deliveries (the review queue is `status=dead`),
 * show one with its attempts, replay one or many, discard.
 */
export async function inboxRoutes(app: FastifyInstance, ctx: Context): Promise<void> {
  const db = ctx.db;

  app.get('/inbox', async (req) => {
    const q = parseInput(listQuery, req.query ?? {});
    return listInbox(db, toFilter(q), { limit: q.limit, cursor: q.cursor });
  });

  app.get('/inbox/:source/:event_id', async (req) => {
    const p = parseInput(deliveryParams, req.params ?? {});
    return showDelivery(db, p.source, p.event_id);
  });

  app.post('/inbox/replay', async (req) => {
    const body = parseInput(bulkReplayBody, req.body ?? {});
    const replayed = await replayMatching(db, toFilter(body), body.force);
    return { replayed };
  });

  app.post('/inbox/:source/:event_id/replay', async (req) => {
    const p = parseInput(deliveryParams, req.params ?? {});
    const body = parseInput(replayBody, req.body ?? {});
    return replayDelivery(db, p.source, p.event_id, body.force);
  });

  app.post('/inbox/:source/:event_id/discard', async (req) => {
    const p = parseInput(deliveryParams, req.params ?? {});
    return discardDelivery(db, p.source, p.event_id);
  });
}

import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { TekilError } from '../errors.js';
import type { Context } from '../service.js';
import {
  discardDelivery,
  inboxStatuses,
  listInbox,
  replayDelivery,
  replayMatching,
  showDelivery,
  type InboxFilter,
} from '../worker/inbox-admin.js';

const time = z.iso.datetime({ offset: true }).transform((s) => new Date(s));

const filterFields = {
  status: z.enum(inboxStatuses).optional(),
  source: z.string().min(1).optional(),
  type: z.string().min(1).optional(),
  resource_id: z.string().min(1).optional(),
  from: time.optional(),
  to: time.optional(),
};
const listQuery = z
  .object({ ...filterFields, limit: z.coerce.number().int().min(1).max(500).default(50), cursor: z.string().optional() })
  .strict();
const bulkReplayBody = z.object({ ...filterFields, force: z.boolean().default(false) }).strict();
const replayBody = z.object({ force: z.boolean().default(false) }).strict();
const deliveryParams = z.object({ source: z.string().min(1), event_id: z.string().min(1) });

function parse<T extends z.ZodType>(schema: T, input: unknown): z.infer<T> {
  const result = schema.safeParse(input ?? {});
  if (!result.success) {
    throw new TekilError('VALIDATION_FAILED', result.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`).join('; '));
  }
  return result.data;
}

function toFilter(q: { status?: string | undefined; source?: string | undefined; type?: string | undefined; resource_id?: string | undefined; from?: Date | undefined; to?: Date | undefined }): InboxFilter {
  return { status: q.status, source: q.source, type: q.type, resourceId: q.resource_id, from: q.from, to: q.to };
}

/**
 * The receiving side's admin API: list and filter deliveries (the review queue is `status=dead`),
 * show one with its attempts, replay one or many, discard.
 */
export async function inboxRoutes(app: FastifyInstance, ctx: Context): Promise<void> {
  const db = ctx.db;

  app.get('/inbox', async (req) => {
    const q = parse(listQuery, req.query);
    return listInbox(db, toFilter(q), { limit: q.limit, cursor: q.cursor });
  });

  app.get('/inbox/:source/:event_id', async (req) => {
    const p = parse(deliveryParams, req.params);
    return showDelivery(db, p.source, p.event_id);
  });

  app.post('/inbox/replay', async (req) => {
    const body = parse(bulkReplayBody, req.body);
    const replayed = await replayMatching(db, toFilter(body), body.force);
    return { replayed };
  });

  app.post('/inbox/:source/:event_id/replay', async (req) => {
    const p = parse(deliveryParams, req.params);
    const body = parse(replayBody, req.body);
    return replayDelivery(db, p.source, p.event_id, body.force);
  });

  app.post('/inbox/:source/:event_id/discard', async (req) => {
    const p = parse(deliveryParams, req.params);
    return discardDelivery(db, p.source, p.event_id);
  });
}

import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Context } from '../service.js';
import { durationMs } from '../config/units.js';
import { outboxParts } from '../outbox/parts.js';
import { storableText } from '../outbox/endpoints.js';
import { parseInput } from '../validation.js';
import { exportDeliveriesCsv, getMessage, listDeliveries, listMessages, type HistoryFilter } from '../outbox/history.js';
import { pingEndpoint, replayFailed, replayMessage } from '../outbox/operations.js';
import { publish } from '../outbox/publish.js';
import { outboxDeliveryStatuses } from '../outbox/types.js';

const idParams = z.object({ id: z.string().min(1).max(64) });

const publishBody = z
  .object({
    type: storableText(255).pipe(z.string().min(1)),
    resource_id: storableText(255).nullable().optional(),
    data: z.unknown().optional(),
    extra_destinations: z
      .array(z.object({ url: storableText(2048).pipe(z.string().url()), endpoint_id: storableText(64).pipe(z.string().min(1)) }).strict())
      .max(20)
      .optional(),
  })
  .strict();

const time = z.iso.datetime({ offset: true }).transform((s) => new Date(s));
const historyQuery = z
  .object({
    endpoint_id: storableText(64).optional(),
    type: storableText(255).optional(),
    status: z.enum(outboxDeliveryStatuses).optional(),
    resource_id: storableText(255).optional(),
    since: time.optional(),
    until: time.optional(),
    cursor: z.string().max(200).optional(),
    limit: z.coerce.number().int().positive().optional(),
  })
  .strict();

function toFilter(q: z.infer<typeof historyQuery>): HistoryFilter {
  return {
    endpointId: q.endpoint_id,
    type: q.type,
    status: q.status,
    resourceId: q.resource_id,
    since: q.since,
    until: q.until,
    cursor: q.cursor,
    limit: q.limit,
  };
}

const replayBody = z.object({ endpoint_id: storableText(64).optional() }).strict();
const replayFailedBody = z.object({ endpoint_id: storableText(64).optional(), since: time.optional(), until: time.optional() }).strict();
/** A rotation window past a year is a mistake, and past the timestamp range a database error. */
const rotateBody = z.object({ window: durationMs.pipe(z.number().max(365 * 86_400_000, 'expected at most 365d')).optional() }).strict();

/** Admin API of the sending side: endpoints, publishing, history, export, replay and ping. */
export async function outboxRoutes(app: FastifyInstance, ctx: Context): Promise<void> {
  const { endpoints } = outboxParts(ctx);
  const db = ctx.db;

  app.post('/endpoints', async (req, reply) => {
    const { endpoint, secret } = await db.transaction((tx) => endpoints.create(tx, req.body));
    return reply.code(201).send({ ...endpoint, secret });
  });
  app.get('/endpoints', async () => ({ items: await endpoints.list(db) }));
  app.get('/endpoints/:id', async (req) => endpoints.get(db, parseInput(idParams, req.params).id));
  app.patch('/endpoints/:id', async (req) => endpoints.update(db, parseInput(idParams, req.params).id, req.body ?? {}));
  app.delete('/endpoints/:id', async (req) => {
    const id = parseInput(idParams, req.params).id;
    return { id, deleted: true, ...(await db.transaction((tx) => endpoints.remove(tx, id))) };
  });
  app.post('/endpoints/:id/disable', async (req) => endpoints.setEnabled(db, parseInput(idParams, req.params).id, false));
  app.post('/endpoints/:id/enable', async (req) => endpoints.setEnabled(db, parseInput(idParams, req.params).id, true));
  app.post('/endpoints/:id/rotate-secret', async (req) => {
    const id = parseInput(idParams, req.params).id;
    const { window } = parseInput(rotateBody, req.body ?? {});
    return { id, ...(await db.transaction((tx) => endpoints.rotateSecret(tx, id, window))) };
  });
  app.post('/endpoints/:id/ping', async (req, reply) => reply.code(202).send(await pingEndpoint(db, parseInput(idParams, req.params).id)));

  app.post('/messages', async (req, reply) => {
    const body = parseInput(publishBody, req.body);
    const key = req.headers['idempotency-key'];
    const idempotencyKey = typeof key === 'string' && key !== '' ? key : undefined;
    const result = await db.transaction((tx) =>
      publish(tx, {
        type: body.type,
        resourceId: body.resource_id ?? null,
        data: body.data ?? null,
        idempotencyKey,
        extraDestinations: body.extra_destinations?.map((x) => ({ url: x.url, endpointId: x.endpoint_id })),
      }),
    );
    if (result.duplicate) reply.header('idempotent-replayed', 'true');
    return reply.code(202).send({ id: result.id });
  });
  app.get('/messages', async (req) => listMessages(db, toFilter(parseInput(historyQuery, req.query))));
  app.get('/messages/:id', async (req) => getMessage(db, parseInput(idParams, req.params).id));
  app.post('/messages/:id/replay', async (req) => {
    const { endpoint_id } = parseInput(replayBody, req.body ?? {});
    return replayMessage(db, parseInput(idParams, req.params).id, endpoint_id);
  });

  app.get('/deliveries', async (req) => listDeliveries(db, toFilter(parseInput(historyQuery, req.query))));
  app.get('/deliveries/export.csv', async (req, reply) => {
    const { cursor: _cursor, limit: _limit, ...filter } = toFilter(parseInput(historyQuery, req.query));
    reply.header('content-type', 'text/csv; charset=utf-8');
    reply.header('content-disposition', 'attachment; filename="tekil-deliveries.csv"');
    return reply.send(Readable.from(exportDeliveriesCsv(db, filter)));
  });
  app.post('/deliveries/replay-failed', async (req) => {
    const body = parseInput(replayFailedBody, req.body ?? {});
    return replayFailed(db, { endpointId: body.endpoint_id, since: body.since, until: body.until });
  });
}

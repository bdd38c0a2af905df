import { Readable } from 'node:stream';
import { z } from 'zod';
import type { Context } from '../service.js';
import { durationMs } from '../config/units.js';
import { outboxParts } from '../outbox/parts.js';
import { endpointCreateSchema, endpointUpdateSchema, storableText } from '../outbox/endpoints.js';
import type { ApiRoutes } from './route-spec.js';
import { tableCsv } from '../dashboard/exports/csv.js';
import { outboxExportTable } from '../dashboard/exports/table.js';
import { getMessage, listDeliveries, listMessages, type HistoryFilter } from '../outbox/history.js';
import { pingEndpoint, replayFailed, replayMessage } from '../outbox/operations.js';
import { createPublishBatcher } from '../outbox/publish-batcher.js';
import { checkIdempotentRepeat } from '../outbox/idempotent-repeat.js';
import { DEFAULT_TENANT_ID } from '../outbox/publish.js';
import { outboxDeliveryStatuses } from '../outbox/types.js';
import { requireEndpointOf, requireMessageOf, tenantFilterOf } from '../outbox/tenant-scope.js';
import { requireRoom, requireSecretRoom } from '../outbox/quotas.js';
import { TekilError } from '../errors.js';
import type { FastifyRequest } from 'fastify';

const idParams = z.object({ id: z.string().min(1).max(64) });

const publishBody = z
  .object({
    /** The tenant (merchant) the message is for; default: the default tenant. */
    tenant_id: storableText(64).pipe(z.string().min(1)).optional(),
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
export const historyQuery = z
  .object({
    endpoint_id: storableText(64).optional(),
    tenant_id: storableText(64).optional(),
    type: storableText(255).optional(),
    status: z.enum(outboxDeliveryStatuses).optional(),
    resource_id: storableText(255).optional(),
    since: time.optional(),
    until: time.optional(),
    cursor: z.string().max(200).optional(),
    limit: z.coerce.number().int().positive().optional(),
  })
  .strict();

/** The tenant a request is scoped to: a tenant caller's own; none for operators and the admin token. */
export const callerTenant = (req: FastifyRequest): string | undefined => req.caller?.tenantId;

/** The list filter of a request: a tenant caller's is pinned to its own tenant (src/outbox/tenant-scope.ts). */
export function toFilter(q: z.infer<typeof historyQuery>, req?: FastifyRequest): HistoryFilter {
  return {
    endpointId: q.endpoint_id,
    tenantId: tenantFilterOf(req ? callerTenant(req) : undefined, q.tenant_id),
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

const endpointParams = idParams;
const endpointListQuery = z.object({ tenant_id: storableText(64).optional() }).strict();

/** Admin API of the sending side: endpoints, publishing, history, export, replay and ping. */
export function outboxRoutes(routes: ApiRoutes, ctx: Context): void {
  const { endpoints } = outboxParts(ctx);
  const db = ctx.db;
  const tag = 'outbox';
  // Publishing through the API is group-committed; stopped once the server has answered its requests.
  const publisher = createPublishBatcher(ctx);
  routes.onClose(() => publisher.stop());

  routes.add(
    {
      method: 'POST',
      url: '/endpoints',
      tag,
      summary: 'Create an endpoint; its secret is in this answer only',
      permission: 'operate',
      tenant: true,
      body: endpointCreateSchema,
      status: 201,
    },
    // The store parses the raw body itself: the parsed one has durations in ms, which it would read as seconds.
    async ({ body }, req) => {
      const tenant = callerTenant(req);
      let raw = req.body;
      if (tenant !== undefined) {
        // A tenant caller makes endpoints of its own tenant only; naming another is naming no tenant.
        if (body.tenant_id !== undefined && body.tenant_id !== tenant) throw new TekilError('TENANT_NOT_FOUND', `no tenant ${body.tenant_id}`);
        raw = { ...(req.body as object), tenant_id: tenant };
      }
      const { endpoint, secret } = await db.transaction(async (tx) => {
        // A merchant's own endpoints count against its quota; the provider (an operator) is not bound by it.
        if (tenant !== undefined) await requireRoom(tx, ctx.config.tenants.quotas, tenant, 'endpoints');
        return endpoints.create(tx, raw);
      });
      return { ...endpoint, secret };
    },
  );
  routes.add(
    {
      method: 'GET',
      url: '/endpoints',
      tag,
      summary: 'List endpoints (of one tenant with `tenant_id`)',
      permission: 'view',
      tenant: true,
      query: endpointListQuery,
    },
    async ({ query }, req) => ({
      items: await endpoints.list(db, tenantFilterOf(callerTenant(req), query.tenant_id)),
    }),
  );
  routes.add(
    { method: 'GET', url: '/endpoints/:id', tag, summary: 'Show one endpoint', permission: 'view', tenant: true, params: endpointParams },
    async ({ params }, req) => {
      await requireEndpointOf(db, callerTenant(req), params.id);
      return endpoints.get(db, params.id);
    },
  );
  routes.add(
    {
      method: 'PATCH',
      url: '/endpoints/:id',
      tag,
      summary: "Change an endpoint's settings",
      permission: 'operate',
      tenant: true,
      params: endpointParams,
      body: endpointUpdateSchema,
    },
    async ({ params }, req) => {
      await requireEndpointOf(db, callerTenant(req), params.id);
      return endpoints.update(db, params.id, req.body ?? {});
    },
  );
  routes.add(
    { method: 'DELETE', url: '/endpoints/:id', tag, summary: 'Delete an endpoint', permission: 'operate', tenant: true, params: endpointParams },
    async ({ params }, req) => {
      await requireEndpointOf(db, callerTenant(req), params.id);
      return { id: params.id, deleted: true, ...(await db.transaction((tx) => endpoints.remove(tx, params.id))) };
    },
  );
  routes.add(
    { method: 'POST', url: '/endpoints/:id/disable', tag, summary: 'Stop sending to an endpoint', permission: 'operate', tenant: true, params: endpointParams },
    async ({ params }, req) => {
      await requireEndpointOf(db, callerTenant(req), params.id);
      return endpoints.setEnabled(db, params.id, false);
    },
  );
  routes.add(
    {
      method: 'POST',
      url: '/endpoints/:id/enable',
      tag,
      summary: 'Resume sending to an endpoint',
      permission: 'operate',
      tenant: true,
      params: endpointParams,
    },
    async ({ params }, req) => {
      await requireEndpointOf(db, callerTenant(req), params.id);
      return endpoints.setEnabled(db, params.id, true);
    },
  );
  routes.add(
    {
      method: 'POST',
      url: '/endpoints/:id/rotate-secret',
      tag,
      summary: "Rotate an endpoint's secret; the old one signs too for `window`",
      permission: 'operate',
      tenant: true,
      params: endpointParams,
      body: rotateBody,
    },
    async ({ params, body }, req) => {
      const tenant = callerTenant(req);
      await requireEndpointOf(db, tenant, params.id);
      return {
        id: params.id,
        ...(await db.transaction(async (tx) => {
          // Each rotation keeps the old secrets signing for their window: a merchant's live secrets are bounded.
          if (tenant !== undefined) await requireSecretRoom(tx, ctx.config.tenants.quotas, tenant, params.id);
          return endpoints.rotateSecret(tx, params.id, body.window);
        })),
      };
    },
  );
  routes.add(
    {
      method: 'POST',
      url: '/endpoints/:id/ping',
      tag,
      summary: 'Send a test.ping to one endpoint',
      permission: 'operate',
      tenant: true,
      params: endpointParams,
      status: 202,
    },
    async ({ params }, req) => {
      await requireEndpointOf(db, callerTenant(req), params.id);
      return pingEndpoint(db, params.id);
    },
  );

  routes.add(
    {
      method: 'POST',
      url: '/messages',
      tag,
      summary: 'Publish a message (Idempotency-Key header honoured)',
      permission: 'operate',
      body: publishBody,
      status: 202,
    },
    async ({ body }, req, reply) => {
      const key = req.headers['idempotency-key'];
      const idempotencyKey = typeof key === 'string' && key !== '' ? key : undefined;
      // Answered once the message's transaction (shared with its concurrent neighbours) has committed.
      const result = await publisher.publish({
        tenantId: body.tenant_id,
        type: body.type,
        resourceId: body.resource_id ?? null,
        data: body.data ?? null,
        idempotencyKey,
        extraDestinations: body.extra_destinations?.map((x) => ({ url: x.url, endpointId: x.endpoint_id })),
      });
      if (result.duplicate) {
        await checkIdempotentRepeat(db, result.id, idempotencyKey!, {
          tenantId: body.tenant_id ?? DEFAULT_TENANT_ID,
          type: body.type,
          resourceId: body.resource_id ?? null,
          data: body.data ?? null,
          extraDestinations: body.extra_destinations?.map((x) => ({ url: x.url, endpointId: x.endpoint_id })) ?? [],
        });
        reply.header('idempotent-replayed', 'true');
      }
      return { id: result.id };
    },
  );
  routes.add(
    { method: 'GET', url: '/messages', tag, summary: 'List published messages', permission: 'view', tenant: true, query: historyQuery },
    async ({ query }, req) => listMessages(db, toFilter(query, req)),
  );
  routes.add(
    { method: 'GET', url: '/messages/:id', tag, summary: 'Show one message with its deliveries', permission: 'view', tenant: true, params: idParams },
    async ({ params }, req) => {
      await requireMessageOf(db, callerTenant(req), params.id);
      return getMessage(db, params.id);
    },
  );
  routes.add(
    {
      method: 'POST',
      url: '/messages/:id/replay',
      tag,
      summary: 'Send a message again (to one endpoint or all)',
      permission: 'operate',
      tenant: true,
      params: idParams,
      body: replayBody,
    },
    async ({ params, body }, req) => {
      await requireMessageOf(db, callerTenant(req), params.id);
      if (body.endpoint_id !== undefined) await requireEndpointOf(db, callerTenant(req), body.endpoint_id);
      return replayMessage(db, params.id, body.endpoint_id);
    },
  );

  routes.add(
    {
      method: 'GET',
      url: '/deliveries',
      tag,
      summary: 'List outbound deliveries with their last attempt',
      permission: 'view',
      tenant: true,
      query: historyQuery,
    },
    async ({ query }, req) => listDeliveries(db, toFilter(query, req)),
  );
  routes.add(
    {
      method: 'GET',
      url: '/deliveries/export.csv',
      tag,
      summary: 'Export outbound deliveries as CSV',
      permission: 'view',
      tenant: true,
      query: historyQuery,
      produces: 'text/csv',
    },
    async ({ query }, req, reply) => {
      const { cursor: _cursor, limit: _limit, ...filter } = toFilter(query, req);
      reply.header('content-type', 'text/csv; charset=utf-8');
      reply.header('content-disposition', 'attachment; filename="tekil-deliveries.csv"');
      return reply.send(Readable.from(tableCsv(outboxExportTable(db, filter))));
    },
  );
  routes.add(
    {
      method: 'POST',
      url: '/deliveries/replay-failed',
      tag,
      summary: 'Replay failed deliveries, by endpoint and time window',
      permission: 'operate',
      tenant: true,
      body: replayFailedBody,
    },
    async ({ body }, req) => {
      const tenantId = callerTenant(req);
      if (body.endpoint_id !== undefined) await requireEndpointOf(db, tenantId, body.endpoint_id);
      return replayFailed(db, { endpointId: body.endpoint_id, tenantId, since: body.since, until: body.until });
    },
  );
}

import { z } from 'zod';
import type { Context } from '../service.js';
import { durationMs } from '../config/units.js';
import { outboxParts } from '../outbox/parts.js';
import { endpointCreateSchema, endpointUpdateSchema, storableText } from '../outbox/endpoints.js';
import type { ApiRoutes } from './route-spec.js';
import { jsonTime } from './answers.js';
import {
  createdEndpointAnswer,
  deliveryPageAnswer,
  endpointAnswer,
  idAnswer,
  messageDetailAnswer,
  messagePageAnswer,
  replayedAnswer,
} from './outbox-answers.js';
import { getMessage, listDeliveries, listMessages, type HistoryFilter } from '../outbox/history.js';
import { pingEndpoint, replayFailed, replayMessage } from '../outbox/operations.js';
import { createPublishBatcher } from '../outbox/publish-batcher.js';
import { eventCatalogue } from '../outbox/event-catalogue.js';
import { checkIdempotentRepeat } from '../outbox/idempotent-repeat.js';
import { DEFAULT_TENANT_ID } from '../outbox/publish.js';
import { outboxDeliveryStatuses } from '../outbox/types.js';
import { narrowScope, requireEndpointIn, requireMessageIn } from '../tenants/scope.js';
import type { Scope } from '../scope.js';
import { checkTenantLimits } from '../outbox/tenant-limits.js';
import { requireRoom, requireSecretRoom } from '../tenants/quotas.js';
import { TekilError } from '../errors.js';

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

/**
 * A history query as a list's scope and filter: a `tenant_id` narrows an operator's scope to that
 * tenant, and names no other tenant than a tenant caller's own (src/tenants/scope.ts).
 */
export function toFilter(q: z.infer<typeof historyQuery>, scope: Scope): { scope: Scope; filter: HistoryFilter } {
  return {
    scope: narrowScope(scope, q.tenant_id),
    filter: {
      endpointId: q.endpoint_id,
      type: q.type,
      status: q.status,
      resourceId: q.resource_id,
      since: q.since,
      until: q.until,
      cursor: q.cursor,
      limit: q.limit,
    },
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
  const catalogue = eventCatalogue(ctx);
  routes.onClose(() => publisher.stop());

  routes.add(
    {
      method: 'POST',
      url: '/endpoints',
      tag,
      summary: 'Create an endpoint; its secret is in this answer only',
      response: createdEndpointAnswer,
      permission: 'operate',
      tenant: true,
      body: endpointCreateSchema,
      status: 201,
    },
    // The store parses the raw body itself: the parsed one has durations in ms, which it would read as seconds.
    async ({ body, scope }, req) => {
      const tenant = scope.tenantId;
      let raw = req.body;
      if (tenant !== undefined) {
        // A tenant caller makes endpoints of its own tenant only; naming another is naming no tenant.
        if (body.tenant_id !== undefined && body.tenant_id !== tenant) throw new TekilError('TENANT_NOT_FOUND', `no tenant ${body.tenant_id}`);
        // The operator bounds what a tenant sets for itself (tenants.limits).
        checkTenantLimits(body, ctx.config.tenants.limits);
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
      response: z.object({ items: z.array(endpointAnswer) }),
      permission: 'view',
      tenant: true,
      query: endpointListQuery,
    },
    async ({ query, scope }) => ({
      items: await endpoints.list(db, narrowScope(scope, query.tenant_id)),
    }),
  );
  routes.add(
    {
      method: 'GET',
      url: '/endpoints/:id',
      tag,
      summary: 'Show one endpoint',
      response: endpointAnswer,
      permission: 'view',
      tenant: true,
      params: endpointParams,
    },
    async ({ params, scope }) => endpoints.get(db, scope, params.id),
  );
  routes.add(
    {
      method: 'PATCH',
      url: '/endpoints/:id',
      tag,
      summary: "Change an endpoint's settings",
      response: endpointAnswer,
      permission: 'operate',
      tenant: true,
      params: endpointParams,
      body: endpointUpdateSchema,
    },
    async ({ params, body, scope }, req) => {
      await requireEndpointIn(db, scope, params.id);
      if (scope.tenantId !== undefined) checkTenantLimits(body, ctx.config.tenants.limits);
      return endpoints.update(db, params.id, req.body ?? {});
    },
  );
  routes.add(
    {
      method: 'DELETE',
      url: '/endpoints/:id',
      tag,
      summary: 'Delete an endpoint',
      response: z.object({ id: z.string(), deleted: z.literal(true), cancelled: z.number() }),
      permission: 'operate',
      tenant: true,
      params: endpointParams,
    },
    async ({ params, scope }) => {
      await requireEndpointIn(db, scope, params.id);
      return { id: params.id, deleted: true as const, ...(await db.transaction((tx) => endpoints.remove(tx, params.id))) };
    },
  );
  routes.add(
    {
      method: 'POST',
      url: '/endpoints/:id/disable',
      tag,
      summary: 'Stop sending to an endpoint',
      response: endpointAnswer,
      permission: 'operate',
      tenant: true,
      params: endpointParams,
    },
    async ({ params, scope }) => {
      await requireEndpointIn(db, scope, params.id);
      return endpoints.setEnabled(db, params.id, false);
    },
  );
  routes.add(
    {
      method: 'POST',
      url: '/endpoints/:id/enable',
      tag,
      summary: 'Resume sending to an endpoint',
      response: endpointAnswer,
      permission: 'operate',
      tenant: true,
      params: endpointParams,
    },
    async ({ params, scope }) => {
      await requireEndpointIn(db, scope, params.id);
      return endpoints.setEnabled(db, params.id, true);
    },
  );
  routes.add(
    {
      method: 'POST',
      url: '/endpoints/:id/rotate-secret',
      tag,
      summary: "Rotate an endpoint's secret; the old one signs too for `window`",
      response: z.object({ id: z.string(), secret: z.string(), previous_expires_at: jsonTime }),
      permission: 'operate',
      tenant: true,
      params: endpointParams,
      body: rotateBody,
    },
    async ({ params, body, scope }) => {
      await requireEndpointIn(db, scope, params.id);
      const tenant = scope.tenantId;
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
      response: idAnswer,
      permission: 'operate',
      tenant: true,
      params: endpointParams,
      status: 202,
    },
    async ({ params, scope }) => {
      await requireEndpointIn(db, scope, params.id);
      return pingEndpoint(db, params.id);
    },
  );

  routes.add(
    {
      method: 'POST',
      url: '/messages',
      tag,
      summary: 'Publish a message (Idempotency-Key header honoured)',
      response: idAnswer,
      permission: 'operate',
      body: publishBody,
      status: 202,
    },
    async ({ body }, req, reply) => {
      const key = req.headers['idempotency-key'];
      const idempotencyKey = typeof key === 'string' && key !== '' ? key : undefined;
      // The event catalogue's check (docs/event-types.md): from memory, no query per message.
      await catalogue.check(body.type, body.data ?? null);
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
    {
      method: 'GET',
      url: '/messages',
      tag,
      summary: 'List published messages',
      response: messagePageAnswer,
      permission: 'view',
      tenant: true,
      query: historyQuery,
    },
    async ({ query, scope }) => {
      const list = toFilter(query, scope);
      return listMessages(db, list.scope, list.filter);
    },
  );
  routes.add(
    {
      method: 'GET',
      url: '/messages/:id',
      tag,
      summary: 'Show one message with its deliveries',
      response: messageDetailAnswer,
      permission: 'view',
      tenant: true,
      params: idParams,
    },
    async ({ params, scope }) => getMessage(db, scope, params.id),
  );
  routes.add(
    {
      method: 'POST',
      url: '/messages/:id/replay',
      tag,
      summary: 'Send a message again (to one endpoint or all)',
      response: replayedAnswer,
      permission: 'operate',
      tenant: true,
      params: idParams,
      body: replayBody,
    },
    async ({ params, body, scope }) => {
      await requireMessageIn(db, scope, params.id);
      if (body.endpoint_id !== undefined) await requireEndpointIn(db, scope, body.endpoint_id);
      return replayMessage(db, params.id, body.endpoint_id);
    },
  );

  routes.add(
    {
      method: 'GET',
      url: '/deliveries',
      tag,
      summary: 'List outbound deliveries with their last attempt',
      response: deliveryPageAnswer,
      permission: 'view',
      tenant: true,
      query: historyQuery,
    },
    async ({ query, scope }) => {
      const list = toFilter(query, scope);
      return listDeliveries(db, list.scope, list.filter);
    },
  );
  // The outbound exports (CSV, Excel, PDF) live with the inbound ones: src/api/exports.ts.
  routes.add(
    {
      method: 'POST',
      url: '/deliveries/replay-failed',
      tag,
      summary: 'Replay failed deliveries, by endpoint and time window',
      response: replayedAnswer,
      permission: 'operate',
      tenant: true,
      body: replayFailedBody,
    },
    async ({ body, scope }) => {
      if (body.endpoint_id !== undefined) await requireEndpointIn(db, scope, body.endpoint_id);
      return replayFailed(db, scope, { endpointId: body.endpoint_id, since: body.since, until: body.until });
    },
  );
}

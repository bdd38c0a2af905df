import { z } from 'zod';
import type { Context } from '../service.js';
import { asyncApiDocument } from '../outbox/asyncapi.js';
import { eventCatalogue } from '../outbox/event-catalogue.js';
import {
  createEventType,
  eventTypeCreateSchema,
  eventTypeNameParams,
  eventTypeSchema,
  eventTypeUpdateSchema,
  getEventType,
  listEventTypesIn,
  updateEventTypeByName,
} from '../outbox/event-types.js';
import { narrowScope } from '../tenants/scope.js';
import { storableText } from '../outbox/endpoints.js';
import type { ApiRoutes } from './route-spec.js';

/** An operator reads what one tenant is shown with `tenant_id`; a tenant names no other tenant. */
const catalogueQuery = z.object({ tenant_id: storableText(64).optional() }).strict();

/**
 * The event catalogue (docs/event-types.md): operators declare types; every caller, a merchant's
 * included, reads the ones shown to it. A change is checked by this process's next publish at once.
 */
export function eventTypeRoutes(routes: ApiRoutes, ctx: Context): void {
  const db = ctx.db;
  const catalogue = eventCatalogue(ctx);
  const tag = 'event-types';

  routes.add(
    {
      method: 'POST',
      url: '/event-types',
      tag,
      summary: 'Declare an event type with its JSON Schema (2020-12) and example',
      permission: 'operate',
      body: eventTypeCreateSchema,
      response: eventTypeSchema,
      status: 201,
    },
    async ({ body }) => {
      const type = await createEventType(db, body);
      await catalogue.reload();
      return type;
    },
  );
  routes.add(
    {
      method: 'GET',
      url: '/event-types',
      tag,
      summary: 'List the event catalogue (a tenant reads the types shown to it)',
      permission: 'view',
      tenant: true,
      query: catalogueQuery,
      response: z.object({ items: z.array(eventTypeSchema) }),
    },
    async ({ query, scope }) => ({ items: await listEventTypesIn(db, narrowScope(scope, query.tenant_id)) }),
  );
  routes.add(
    {
      method: 'GET',
      url: '/event-types/asyncapi.json',
      tag,
      summary: 'The event catalogue as an AsyncAPI 3.0 document',
      permission: 'view',
      tenant: true,
      query: catalogueQuery,
      response: z.object({ asyncapi: z.literal('3.0.0') }).loose(),
    },
    async ({ query, scope }) => asyncApiDocument(await listEventTypesIn(db, narrowScope(scope, query.tenant_id)), { title: 'tekil events', version: '1' }),
  );
  routes.add(
    {
      method: 'GET',
      url: '/event-types/:name',
      tag,
      summary: 'Show one event type',
      permission: 'view',
      tenant: true,
      params: eventTypeNameParams,
      response: eventTypeSchema,
    },
    async ({ params, scope }) => getEventType(db, scope, params.name),
  );
  routes.add(
    {
      method: 'PATCH',
      url: '/event-types/:name',
      tag,
      summary: 'Change an event type (a new schema moves its version on)',
      permission: 'operate',
      params: eventTypeNameParams,
      body: eventTypeUpdateSchema,
      response: eventTypeSchema,
    },
    async ({ params, body }) => {
      const type = await updateEventTypeByName(db, params.name, body);
      await catalogue.reload();
      return type;
    },
  );
}

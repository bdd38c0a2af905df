import { z } from 'zod';
import type { Context } from '../service.js';
import type { ApiRoutes } from './route-spec.js';
import { tenantAnswer, tenantDeletionAnswer } from './tenant-answers.js';
import {
  createTenant,
  deleteTenant,
  getTenant,
  listTenantPage,
  tenantCreateSchema,
  tenantDeleteSchema,
  tenantId,
  tenantUpdateSchema,
  updateTenantSettings,
} from '../tenants/tenants.js';

const tenantParams = z.object({ id: tenantId });
const listQuery = z.object({ after: tenantId.optional(), limit: z.coerce.number().int().positive().max(1000).optional() }).strict();

/** Tenants (one per merchant): create, list, show, change, delete with everything they own. */
export function tenantRoutes(routes: ApiRoutes, ctx: Context): void {
  const db = ctx.db;
  const tag = 'tenants';
  routes.add(
    {
      method: 'POST',
      url: '/tenants',
      tag,
      summary: 'Create a tenant (one per merchant); `id` is your own merchant id, or generated',
      response: tenantAnswer,
      permission: 'operate',
      body: tenantCreateSchema,
      status: 201,
    },
    // The store parses the raw body itself: the parsed one has durations in ms, which it would read as seconds.
    async (_input, req) => createTenant(db, req.body),
  );
  routes.add(
    {
      method: 'GET',
      url: '/tenants',
      tag,
      summary: 'List tenants in id order (`after` pages on)',
      response: z.object({
        items: z.array(tenantAnswer),
        next_cursor: z.string().nullable(),
      }),
      permission: 'view',
      query: listQuery,
    },
    async ({ query }) => listTenantPage(db, query.after, query.limit),
  );
  routes.add(
    {
      method: 'GET',
      url: '/tenants/:id',
      tag,
      summary: 'Show one tenant',
      response: tenantAnswer,
      permission: 'view',
      params: tenantParams,
    },
    async ({ params }) => getTenant(db, params.id),
  );
  routes.add(
    {
      method: 'PATCH',
      url: '/tenants/:id',
      tag,
      summary:
        "Change a tenant's name, metadata, `disabled` (a disabled tenant's messages are kept, not sent) or settings (defaults for its endpoints, `max_in_flight`, `weight`; null clears one)",
      response: tenantAnswer,
      permission: 'operate',
      params: tenantParams,
      body: tenantUpdateSchema,
    },
    async ({ params }, req) => updateTenantSettings(db, params.id, req.body ?? {}, ctx.config.sending),
  );
  routes.add(
    {
      method: 'DELETE',
      url: '/tenants/:id',
      tag,
      summary: 'Delete a tenant with its endpoints, messages, deliveries and attempts; needs `confirm: true`',
      response: tenantDeletionAnswer,
      permission: 'operate',
      params: tenantParams,
      body: tenantDeleteSchema,
    },
    async ({ params, body }) => deleteTenant(db, params.id, body.confirm, ctx.config.retention.batch_size),
  );
}

import { z } from 'zod';
import { TekilError } from '../errors.js';
import { quotasOf } from '../tenants/quotas.js';
import { getTenant, tenantId } from '../tenants/tenants.js';
import type { Context } from '../service.js';
import { countLiveEndpoints, countLiveTokens, setTenantQuotas } from '../store/sql/tenants/quotas.js';
import type { ApiRoutes } from './route-spec.js';

const tenantParams = z.object({ id: tenantId });
const quota = z.number().int().min(0).max(1_000_000).nullable().optional();
/** A value sets the tenant's own quota; null removes it (the configured default applies again). */
const quotasBody = z.object({ endpoints: quota, tokens: quota, secrets: quota, streams: quota }).strict();

/**
 * A tenant's quotas (docs/tenants.md#quotas): what applies (its own value, else `tenants.quotas`), what it
 * holds, and an operator's per-tenant override, for a provider whose plans differ.
 */
export function tenantQuotaRoutes(routes: ApiRoutes, ctx: Context): void {
  const db = ctx.db;
  const tag = 'tenants';
  const show = async (id: string) => {
    await getTenant(db, id);
    const { own, ...quotas } = await quotasOf(db, ctx.config.tenants.quotas, id);
    const [endpoints, tokens] = await Promise.all([countLiveEndpoints.run(db, { tenantId: id }), countLiveTokens.run(db, { tenantId: id })]);
    return { tenant_id: id, quotas, own, held: { endpoints: endpoints.rows[0]!.n, tokens: tokens.rows[0]!.n } };
  };
  routes.add(
    {
      method: 'GET',
      url: '/tenants/:id/quotas',
      tag,
      summary: "A tenant's quotas, its own overrides and what it holds",
      response: z.object({
        tenant_id: z.string(),
        quotas: z.object({ endpoints: z.number(), tokens: z.number(), secrets: z.number(), streams: z.number() }),
        own: z.record(z.string(), z.unknown()),
        held: z.object({ endpoints: z.number(), tokens: z.number() }),
      }),
      permission: 'view',
      params: tenantParams,
    },
    async ({ params }) => show(params.id),
  );
  routes.add(
    {
      method: 'PATCH',
      url: '/tenants/:id/quotas',
      tag,
      summary: "Set a tenant's own quotas (null: back to the configured default)",
      response: z.object({
        tenant_id: z.string(),
        quotas: z.object({ endpoints: z.number(), tokens: z.number(), secrets: z.number(), streams: z.number() }),
        own: z.record(z.string(), z.unknown()),
        held: z.object({ endpoints: z.number(), tokens: z.number() }),
      }),
      permission: 'admin',
      params: tenantParams,
      body: quotasBody,
    },
    async ({ params, body }) => {
      const { rows } = await setTenantQuotas.run(db, { tenantId: params.id, quotasJson: JSON.stringify(body) });
      if (!rows[0]) throw new TekilError('TENANT_NOT_FOUND', `no tenant ${params.id}`);
      return show(params.id);
    },
  );
}

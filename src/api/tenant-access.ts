import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { createPortalLink, PORTAL_LINK_DEFAULT_TTL_MS, PORTAL_LINK_MAX_TTL_MS } from '../tenants/portal-links.js';
import { operatorRoles } from '../auth/roles.js';
import { createTenantToken, listTenantTokens, revokeTenantTokenOf } from '../auth/tenant-tokens.js';
import { durationMs } from '../config/units.js';
import { storableText } from '../outbox/endpoints.js';
import { requireRoom } from '../tenants/quotas.js';
import { getTenant, tenantId } from '../tenants/tenants.js';
import type { Context } from '../service.js';
import type { ApiRoutes } from './route-spec.js';
import { jsonTime } from './answers.js';
import { tenantTokenAnswer } from './tenant-answers.js';
import { TekilError } from '../errors.js';

/**
 * Where portal links point: `portal.public_url`; else, behind a trusted proxy, the host the proxy
 * describes; else the address and port this request reached tekil on. Never the request's own `Host`
 * header, which any client sets: `Host: evil.example` must not make a link to evil.example.
 */
function portalLinkBase(ctx: Context, req: FastifyRequest): string {
  const configured = ctx.config.portal.public_url;
  if (configured !== undefined) return configured.replace(/\/+$/, '');
  if (ctx.config.server.trust_proxy.length > 0) return `${req.protocol}://${req.host}`;
  const { localAddress, localPort } = req.socket;
  if (!localAddress || !localPort) {
    throw new TekilError('CONFLICT', 'tekil does not know the address portal links should use', { hint: 'set portal.public_url in the configuration' });
  }
  const address = localAddress.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');
  return `${req.protocol}://${address.includes(':') ? `[${address}]` : address}:${localPort}`;
}

const tenantParams = z.object({ id: tenantId });
const tokenParams = z.object({ id: tenantId, token_id: z.string().regex(/^ttk_[0-9a-f]{1,64}$/, 'a tenant token id is ttk_…') });
const tokenBody = z.object({ role: z.enum(operatorRoles), name: storableText(100).optional() }).strict();
const tokenListQuery = z.object({ revoked: z.enum(['true', 'false']).default('false') }).strict();
const portalLinkBody = z
  .object({
    ttl: durationMs.pipe(z.number().min(10_000, 'expected at least 10s').max(PORTAL_LINK_MAX_TTL_MS, 'expected at most 24h')).optional(),
    role: z.enum(operatorRoles).optional(),
  })
  .strict();

/**
 * A tenant's own access (docs/tenants.md): tokens that see that tenant only, and one-time links into
 * the merchant portal, which a provider's backend makes when a merchant opens "Webhooks" in its panel.
 */
export function tenantAccessRoutes(routes: ApiRoutes, ctx: Context): void {
  const db = ctx.db;
  const tag = 'tenants';
  routes.add(
    {
      method: 'POST',
      url: '/tenants/:id/tokens',
      tag,
      summary: "Make a token of one tenant (it sees that tenant's rows only); the token is in this answer only",
      response: tenantTokenAnswer.extend({ token: z.string() }),
      permission: 'admin',
      params: tenantParams,
      body: tokenBody,
      status: 201,
    },
    async ({ params, body }) => {
      // Tokens count against the tenant's quota whoever makes them: a leak of tokens is a leak of access.
      const { tenantToken, token } = await db.transaction(async (tx) => {
        await requireRoom(tx, ctx.config.tenants.quotas, params.id, 'tokens');
        return createTenantToken(tx, params.id, body.role, body.name);
      });
      return { ...tenantToken, token };
    },
  );
  routes.add(
    {
      method: 'GET',
      url: '/tenants/:id/tokens',
      tag,
      summary: "List a tenant's tokens (revoked ones with revoked=true)",
      response: z.object({ items: z.array(tenantTokenAnswer) }),
      permission: 'admin',
      params: tenantParams,
      query: tokenListQuery,
    },
    async ({ params, query }) => {
      await getTenant(db, params.id);
      return { items: await listTenantTokens(db, params.id, query.revoked === 'true') };
    },
  );
  routes.add(
    {
      method: 'POST',
      url: '/tenants/:id/tokens/:token_id/revoke',
      tag,
      summary: "Revoke a tenant's token; the sessions signed in with it end too",
      response: tenantTokenAnswer,
      permission: 'admin',
      params: tokenParams,
    },
    async ({ params }) => revokeTenantTokenOf(db, params.id, params.token_id),
  );
  routes.add(
    {
      method: 'POST',
      url: '/tenants/:id/portal-links',
      tag,
      summary: "Make a one-time link into the tenant's portal (default ttl 10m, role viewer)",
      response: z.object({ url: z.string(), expires_at: jsonTime, role: z.string(), tenant_id: z.string() }),
      permission: 'operate',
      params: tenantParams,
      body: portalLinkBody,
      status: 201,
    },
    async ({ params, body }, req, reply) => {
      const base = portalLinkBase(ctx, req);
      if ((await getTenant(db, params.id)).disabled) {
        throw new TekilError('CONFLICT', `tenant ${params.id} is disabled: its portal does not open`, {
          hint: 'enable the tenant first (PATCH /api/v1/tenants/:id {"disabled": false})',
        });
      }
      const { token, link } = await createPortalLink(db, params.id, body.role ?? 'viewer', body.ttl ?? PORTAL_LINK_DEFAULT_TTL_MS);
      reply.header('cache-control', 'no-store');
      return { url: `${base}/portal/link/${token}`, expires_at: link.expires_at, role: link.role, tenant_id: link.tenant_id };
    },
  );
}

import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { durationMs } from '../config/units.js';
import { TekilError } from '../errors.js';
import { outboxParts } from '../outbox/parts.js';
import { listSigningKeys, rotateSigningKey, tenantJwks } from '../outbox/signing-keys.js';
import type { Context } from '../service.js';
import type { Db } from '../store/db.js';
import { tenantId } from '../tenants/tenants.js';
import { jsonTime } from './answers.js';
import type { ApiRoutes } from './route-spec.js';

/** Where a tenant's public keys are published (docs/signing.md, "Ed25519"). */
export const JWKS_PATH = '/.well-known/webhooks/:tenant/jwks.json';

/** How long a JWKS document may be cached: a rotation keeps the old key signing far longer (24 h by default). */
const JWKS_MAX_AGE_SEC = 300;

const tenantParams = z.object({ id: tenantId });
/** A key as the API shows it: its id, its public half, and how long it still signs (never its secret half). */
const keyAnswer = z.object({ kid: z.string(), public_key: z.string(), created_at: jsonTime, expires_at: jsonTime.nullable() });
const keysAnswer = z.object({ tenant_id: z.string(), keys: z.array(keyAnswer) });
const rotatedAnswer = z.object({ tenant_id: z.string(), key: keyAnswer, previous_expires_at: jsonTime.nullable() });
const rotateBody = z.object({ window: durationMs.pipe(z.number().max(365 * 86_400_000, 'expected at most 365d')).optional() }).strict();

/** A tenant's Ed25519 keys through the admin API: list the live ones, rotate (the first call makes one). */
export function signingKeyRoutes(routes: ApiRoutes, ctx: Context): void {
  const db = ctx.db;
  const tag = 'tenants';
  routes.add(
    {
      method: 'GET',
      url: '/tenants/:id/signing-keys',
      tag,
      summary: "A tenant's live Ed25519 public keys (`v1a`), current first; never a secret key",
      permission: 'view',
      params: tenantParams,
      response: keysAnswer,
    },
    async ({ params }) => {
      if ((await tenantJwks(db, params.id)) === undefined) throw new TekilError('TENANT_NOT_FOUND', `no tenant ${params.id}`);
      return { tenant_id: params.id, keys: await listSigningKeys(db, params.id) };
    },
  );
  routes.add(
    {
      method: 'POST',
      url: '/tenants/:id/signing-keys/rotate',
      tag,
      summary: 'Make a new Ed25519 key pair for a tenant; its live keys keep signing beside it for `window`',
      permission: 'operate',
      params: tenantParams,
      body: rotateBody,
      status: 201,
      response: rotatedAnswer,
    },
    async ({ params, body }) => {
      const window = body.window ?? ctx.config.sending.rotation_window;
      const { box } = outboxParts(ctx);
      const rotated = await db.transaction((tx) => rotateSigningKey(tx, box, params.id, window));
      return { tenant_id: params.id, ...rotated };
    },
  );
}

/**
 * GET /.well-known/webhooks/:tenant/jwks.json: the tenant's live public keys as a JWKS document, for
 * receivers that verify `v1a`. Open to anyone (public keys are public) and cacheable; it says nothing
 * else about the tenant, and an unknown tenant is a 404 like any other missing page.
 */
export const jwksRoutes: FastifyPluginAsync<{ db: Db }> = async (app, { db }) => {
  app.get<{ Params: { tenant: string } }>(JWKS_PATH, async (req, reply) => {
    const parsed = tenantId.safeParse(req.params.tenant);
    const jwks = parsed.success ? await tenantJwks(db, parsed.data) : undefined;
    if (!jwks) throw new TekilError('TENANT_NOT_FOUND', `no tenant ${req.params.tenant}`);
    reply.header('cache-control', `public, max-age=${JWKS_MAX_AGE_SEC}`);
    reply.header('access-control-allow-origin', '*');
    reply.type('application/jwk-set+json');
    return JSON.stringify(jwks);
  });
};

/** The JWKS route in the OpenAPI document (it lives outside /api/v1, so no route spec describes it). */
export const jwksOpenApiPath = {
  '/.well-known/webhooks/{tenant}/jwks.json': {
    get: {
      operationId: 'getTenantJwks',
      summary: "A tenant's Ed25519 public keys as a JWKS document (RFC 7517), for verifying v1a signatures; cacheable, no authentication",
      tags: ['signing'],
      'x-tekil-permission': 'public',
      security: [],
      parameters: [{ name: 'tenant', in: 'path', required: true, schema: { type: 'string' } }],
      responses: {
        '200': {
          description: 'the live public keys, current first',
          content: {
            'application/jwk-set+json': {
              schema: {
                type: 'object',
                required: ['keys'],
                properties: {
                  keys: {
                    type: 'array',
                    items: {
                      type: 'object',
                      required: ['kty', 'crv', 'x', 'kid'],
                      properties: {
                        kty: { const: 'OKP' },
                        crv: { const: 'Ed25519' },
                        x: { type: 'string', description: 'the raw 32-byte public key, base64url' },
                        kid: { type: 'string', description: 'RFC 7638 thumbprint; webhook-key-id names it' },
                        use: { const: 'sig' },
                        alg: { const: 'EdDSA' },
                      },
                    },
                  },
                },
              },
            },
          },
        },
        default: { description: 'a coded error (see docs/errors.md)', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
      },
    },
  },
};

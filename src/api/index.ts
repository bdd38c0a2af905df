import type { FastifyPluginAsync } from 'fastify';
import { TekilError } from '../errors.js';
import type { Context } from '../service.js';
import { authenticate } from '../auth/authenticate.js';
import { CSRF_HEADER, isPortalRequest } from '../auth/sessions.js';
import { outboxRoutes } from './outbox.js';
import { tenantRoutes } from './tenants.js';
import { tenantAccessRoutes } from './tenant-access.js';
import { tenantQuotaRoutes } from './tenant-quotas.js';
import { inboxRoutes } from './inbox.js';
import { operatorRoutes } from './operators.js';
import { reconcileRoutes } from './reconcile.js';
import { incidentRoutes } from './incidents.js';
import { sessionRoutes } from './session.js';
import { statsRoutes } from './stats.js';
import { exportRoutes } from './exports.js';
import { jobRoutes } from './jobs.js';
import { eventRoutes } from './events.js';
import { eventTypeRoutes } from './event-types.js';
import { auditRoutes } from './audit.js';
import { erasureRoutes } from './erasure.js';
import { registerAuditTrail } from '../audit/trail.js';
import { registerDashboardGauges } from '../dashboard/stats.js';
import { buildOpenApiDocument, type OpenApiDocument } from './openapi.js';
import { ApiRoutes } from './route-spec.js';
import { someObject } from './answers.js';
import { findNulByte } from './nul-bytes.js';
import { jsonNestsDeeperThan, MAX_JSON_DEPTH } from './json-depth.js';
import { signingKeyRoutes } from './signing-keys.js';

export interface AdminApiOptions {
  ctx: Context;
  adminToken: string;
}

/** Route modules of the admin API; each is registered under /api/v1 and declares who may call it. */
const routeModules: Array<(routes: ApiRoutes, ctx: Context, adminToken: string) => void> = [
  outboxRoutes,
  eventTypeRoutes,
  tenantRoutes,
  tenantAccessRoutes,
  tenantQuotaRoutes,
  signingKeyRoutes,
  inboxRoutes,
  operatorRoutes,
  sessionRoutes,
  statsRoutes,
  exportRoutes,
  jobRoutes,
  eventRoutes,
  reconcileRoutes,
  incidentRoutes,
  auditRoutes,
  erasureRoutes,
];

export const adminApi: FastifyPluginAsync<AdminApiOptions> = async (app, { ctx, adminToken }) => {
  // Before authentication: the sign-in limit refuses first, and every change is recorded (docs/audit.md).
  registerAuditTrail(app, ctx);
  // Who is calling, and may they: src/auth/authenticate.ts (bearer token, or the cookie with its CSRF token).
  app.addHook('onRequest', async (req) => {
    const permission = req.routeOptions.config.permission;
    const portal = isPortalRequest(req.headers, req.query);
    // `?portal=1` (an EventSource, a download link) only picks the cookie: no route reads it as a filter.
    if (typeof req.query === 'object' && req.query !== null) delete (req.query as Record<string, unknown>).portal;
    if (permission === 'public') return;
    const { caller, session } = await authenticate(
      ctx.db,
      adminToken,
      permission,
      {
        authorization: req.headers.authorization,
        cookie: req.headers.cookie,
        csrf: req.headers[CSRF_HEADER],
        portal,
      },
      (caller) => (req.caller = caller),
      { tenant: req.routeOptions.config.tenant === true, method: req.method, url: req.url },
    );
    req.caller = caller;
    if (session) req.session = session;
  });

  // `curl -X POST -H 'content-type: application/json'` sends the header with no body: for routes that
  // take no body (replay, rotate-secret, …) that is no body at all, not malformed JSON. Routes that need
  // one still refuse `undefined` through their schema.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if ((body as string).trim() === '') return done(null, undefined);
    if (jsonNestsDeeperThan(body as string, MAX_JSON_DEPTH)) {
      return done(new TekilError('BODY_TOO_DEEP', `the JSON body nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep`), undefined);
    }
    parseJson(req, body as string, done);
  });

  // `curl -X POST -d ''` sends a form content type with no body: an empty body of any type is no body.
  // A non-empty body of a type the API does not read (text/plain included) is refused with a hint.
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (req, body, done) => {
    if ((body as Buffer).length === 0) return done(null, undefined);
    done(
      new TekilError('UNSUPPORTED_MEDIA_TYPE', `the admin API reads JSON bodies, not ${req.headers['content-type'] ?? 'a body without a content type'}`, {
        hint: 'send the body with Content-Type: application/json',
      }),
      undefined,
    );
  });

  // Refused here once rather than in every route: Postgres cannot hold a NUL in text or jsonb.
  app.addHook('preValidation', async (req) => {
    const field = findNulByte(req.params, 'params') ?? findNulByte(req.query, 'query') ?? findNulByte(req.body, 'body');
    if (field !== undefined) {
      throw new TekilError('VALIDATION_FAILED', `${field}: contains a NUL character (U+0000), which tekil cannot store`);
    }
  });

  registerDashboardGauges(ctx.metrics, ctx.db);
  const routes = new ApiRoutes(app);
  for (const register of routeModules) register(routes, ctx, adminToken);
  // Built once, from the same specs (and so the same zod schemas) the routes validate their input with.
  let document: OpenApiDocument | undefined;
  routes.add(
    { method: 'GET', url: '/openapi.json', tag: 'meta', summary: 'This API as an OpenAPI 3.1 document', permission: 'public', response: someObject },
    async () => {
      document ??= buildOpenApiDocument(routes.specs);
      return document as object;
    },
  );
};

import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { TekilError } from '../errors.js';
import type { Context } from '../service.js';
import { tokenMatches } from './token.js';
import { outboxRoutes } from './outbox.js';
import { inboxRoutes } from './inbox.js';
import { reconcileRoutes } from './reconcile.js';
import { findNulByte } from './nul-bytes.js';

export interface AdminApiOptions {
  ctx: Context;
  adminToken: string;
}

/** Route modules of the admin API; each is registered under /api/v1 behind the bearer token. */
const routeModules: Array<(app: FastifyInstance, ctx: Context) => Promise<void> | void> = [outboxRoutes, inboxRoutes, reconcileRoutes];

export const adminApi: FastifyPluginAsync<AdminApiOptions> = async (app, { ctx, adminToken }) => {
  app.addHook('onRequest', async (req) => {
    const header = req.headers.authorization;
    const presented = header?.startsWith('Bearer ') ? header.slice(7).trim() : undefined;
    if (!tokenMatches(adminToken, presented)) {
      throw new TekilError('UNAUTHORIZED', presented === undefined ? 'no admin token' : 'wrong admin token', {
        hint: 'send Authorization: Bearer <TEKIL_ADMIN_TOKEN>',
      });
    }
  });

  // `curl -X POST -H 'content-type: application/json'` sends the header with no body: for routes that
  // take no body (replay, rotate-secret, …) that is no body at all, not malformed JSON. Routes that need
  // one still refuse `undefined` through their schema.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if ((body as string).trim() === '') return done(null, undefined);
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

  for (const register of routeModules) await register(app, ctx);
};

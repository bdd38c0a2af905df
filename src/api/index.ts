import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { TekilError } from '../errors.js';
import type { Context } from '../service.js';
import { tokenMatches } from './token.js';
import { outboxRoutes } from './outbox.js';
import { inboxRoutes } from './inbox.js';

export interface AdminApiOptions {
  ctx: Context;
  adminToken: string;
}

/** Route modules of the admin API; each is registered under /api/v1 behind the bearer token. */
const routeModules: Array<(app: FastifyInstance, ctx: Context) => Promise<void> | void> = [outboxRoutes, inboxRoutes];

export const adminApi: FastifyPluginAsync<AdminApiOptions> = async (app, { ctx, adminToken }) => {
  app.addHook('onRequest', async (req) => {
    const header = req.headers.authorization;
    const presented = header?.startsWith('Bearer ') ? header.slice(7).trim() : undefined;
    if (!tokenMatches(adminToken, presented)) {
      throw new TekilError('UNAUTHORIZED', 'missing or wrong admin token (Authorization: Bearer <TEKIL_ADMIN_TOKEN>)');
    }
  });
  for (const register of routeModules) await register(app, ctx);
};

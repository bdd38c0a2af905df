import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { TekilError, isTekilError } from './errors.js';
import type { Context, Role } from './service.js';
import { adminApi } from './api/index.js';

export interface AppOptions {
  ctx: Context;
  roles: ReadonlySet<Role>;
  adminToken?: string;
}

/** Builds the HTTP surface without listening, so tests can drive it through `inject()`. */
export async function buildApp({ ctx, roles, adminToken }: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: ctx.logger as FastifyBaseLogger,
    // Fastify's request log includes headers on error; ours below logs method, route and status only.
    disableRequestLogging: true,
    bodyLimit: ctx.config.server.body_limit,
    return503OnClosing: true,
  });

  app.addHook('onResponse', async (req, reply) => {
    req.log.debug({ method: req.method, url: req.routeOptions.url ?? req.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime) }, 'request');
  });

  app.setErrorHandler(async (err: unknown, req, reply) => {
    if (isTekilError(err)) {
      if (err.statusCode >= 500) req.log.warn({ code: err.code, err: err.cause ?? err }, err.message);
      return reply.code(err.statusCode).send(err.toJSON());
    }
    const fe = err as { code?: string; statusCode?: number; message?: string };
    if (fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return reply.code(413).send({ error: 'BODY_TOO_LARGE', message: `body exceeds the limit of ${ctx.config.server.body_limit} bytes` });
    }
    if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
      return reply.code(fe.statusCode).send({ error: fe.code === 'FST_ERR_VALIDATION' ? 'VALIDATION_FAILED' : (fe.code ?? 'BAD_REQUEST'), message: fe.message ?? 'bad request' });
    }
    req.log.error({ err }, 'unhandled error');
    return reply.code(500).send({ error: 'INTERNAL', message: 'internal error' });
  });

  app.setNotFoundHandler(async (req, reply) => {
    return reply.code(404).send({ error: 'NOT_FOUND', message: `no route ${req.method} ${req.url}` });
  });

  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_req, reply) => {
    try {
      await ctx.db.query('SELECT 1');
      return { status: 'ready', store: ctx.db.kind };
    } catch (err) {
      return reply.code(503).send(new TekilError('STORE_UNAVAILABLE', 'store unreachable', { cause: err }).toJSON());
    }
  });
  app.get('/metrics', async (_req, reply) => {
    reply.header('content-type', ctx.metrics.contentType);
    return ctx.metrics.metrics();
  });

  if (roles.has('api')) {
    if (!adminToken) throw new TekilError('CONFIG_INVALID', 'the api role needs an admin token');
    await app.register(adminApi, { prefix: '/api/v1', ctx, adminToken });
  }
  return app;
}

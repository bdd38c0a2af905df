import { jwksRoutes } from './api/signing-keys.js';
import { storeOutages } from './alerts/store-outages.js';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply } from 'fastify';
import { TekilError, isTekilError, toClientError } from './errors.js';
import { errorBody, errorLanguage } from './errors-tr.js';
import type { Context, Role } from './service.js';
import { adminApi } from './api/index.js';
import { panelRoutes } from './dashboard/panel.js';
import { portalRoutes } from './tenants/portal.js';
import { receiverRoutes } from './receiver/route.js';
import { createInboxBatcher } from './receiver/batcher.js';
import type { InboxWriter } from './receiver/batcher.js';
import { capConnections } from './http/connection-cap.js';
import { clientErrorAnswer } from './http/client-error.js';
import { discardRest } from './http/discard-body.js';
import { storeAnswers } from './store/sql/health.js';
import { storeMaintenance } from './store/maintenance.js';
import { metricsTokenMatches } from './metrics.js';

export interface AppOptions {
  ctx: Context;
  roles: ReadonlySet<Role>;
  adminToken?: string;
  /** The receiver's group-commit batcher; when absent with the receiver role, the app makes and owns one. */
  batcher?: InboxWriter;
  /** What /metrics answers; this process's registry when absent (a supervised process sums the box's). */
  readMetrics?: () => Promise<string>;
}

/** A quarter of the shorter request timeout, between 250 ms and 30 s. */
function checkingInterval(requestTimeoutMs: number, headersTimeoutMs: number): number {
  const shortest = Math.min(...[requestTimeoutMs, headersTimeoutMs].filter((ms) => ms > 0), 120_000);
  return Math.min(30_000, Math.max(250, Math.round(shortest / 4)));
}

/** Builds the HTTP surface without listening, so tests can drive it through `inject()`. */
export async function buildApp({ ctx, roles, adminToken, batcher, readMetrics }: AppOptions): Promise<FastifyInstance> {
  const server = ctx.config.server;
  const app = Fastify({
    loggerInstance: ctx.logger as FastifyBaseLogger,
    // Fastify's request log includes headers on error; ours below logs method, route and status only.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: ctx.config.server.body_limit,
    return503OnClosing: true,
    // X-Forwarded-* only from the configured proxies; with none, req.protocol and req.ip are the socket's.
    ...(server.trust_proxy.length > 0 ? { trustProxy: server.trust_proxy } : {}),
    // A URL the router cannot decode never reaches the error handler: answer it in the same coded shape.
    frameworkErrors: (err, req, reply) => {
      const error = toClientError(err);
      void (reply as FastifyReply).code(error.statusCode).send(errorBody(error, errorLanguage(req.headers['accept-language'])));
    },
    // What Node's HTTP parser refuses (a malformed request, headers too large, a timeout) never
    // reaches a route either: the same coded shape.
    clientErrorHandler: clientErrorAnswer(ctx.logger),
    // Node's and Fastify's defaults never time a request out, so a client sending one byte at a time
    // holds its connection forever. These bound the headers, the whole request and idle keep-alives.
    requestTimeout: server.request_timeout,
    keepAliveTimeout: server.keep_alive_timeout,
    http: {
      headersTimeout: server.headers_timeout,
      requestTimeout: server.request_timeout,
      // Node checks the two timeouts above on this interval (30 s by default, which would let a slow
      // request live up to twice its timeout).
      connectionsCheckingInterval: checkingInterval(server.request_timeout, server.headers_timeout),
    },
  });
  capConnections(app.server, {
    max: server.max_connections,
    // Unset: a tenth of the cap, so a flood from a few addresses (500 slow connections from two once
    // took every slot) leaves room for everyone else.
    maxPerAddress: server.max_connections_per_address ?? Math.max(1, Math.floor(server.max_connections / 10)),
    retryAfterSec: ctx.config.receiver.retry_after,
  });

  // Only at debug level: the hook costs on every request even when its log line is dropped.
  if (ctx.logger.isLevelEnabled('debug')) {
    app.addHook('onResponse', async (req, reply) => {
      req.log.debug({ method: req.method, url: req.routeOptions.url ?? req.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime) }, 'request');
    });
  }

  // Every answer to a failed request is a catalogue code with its status: the framework's own
  // refusals (bad JSON, unsupported media type, validation, unknown route) are mapped, not passed on.
  app.setErrorHandler(async (err: unknown, req, reply) => {
    let error = toClientError(err);
    if (!isTekilError(err) && error.code === 'BODY_TOO_LARGE') {
      error = new TekilError('BODY_TOO_LARGE', `body exceeds the limit of ${ctx.config.server.body_limit} bytes`, { cause: err });
    }
    // Counted in memory: the store cannot record its own outage (the store_unreachable alert, docs/alerts.md).
    if (error.code === 'STORE_UNAVAILABLE') storeOutages(ctx.metrics).note();
    if (error.statusCode >= 500) {
      if (error.code === 'INTERNAL' && !isTekilError(err)) req.log.error({ err }, 'unhandled error');
      else req.log.warn({ code: error.code, err: error.cause ?? error }, error.message);
    } else if (!isTekilError(err)) {
      // A refusal mapped from another error (the framework's, or the store's net): its cause, for debugging.
      req.log.debug({ code: error.code, err }, error.message);
    }
    // A refusal sent before the body was read (413, a 503 for bodies in flight) closes the connection:
    // read the rest and drop it first (up to four times the limit, a few seconds), so a client still
    // writing reads the answer instead of a reset.
    // A body cut for arriving too slowly is not waited for: its connection closes with the answer.
    if (req.raw.complete === false) {
      if (error.code === 'REQUEST_TIMEOUT') reply.header('connection', 'close');
      else await discardRest(req.raw, 4 * ctx.config.server.body_limit);
    }
    // Every 503 says when to come back (the receiver sets its own before throwing).
    if (error.statusCode === 503 && !reply.hasHeader('retry-after')) reply.header('retry-after', String(ctx.config.receiver.retry_after));
    // In Turkish for a caller that asks for it (the portal in Turkish): src/errors-tr.ts.
    return reply.code(error.statusCode).send(errorBody(error, errorLanguage(req.headers['accept-language'])));
  });

  app.setNotFoundHandler(async (req, reply) => {
    return reply.code(404).send(errorBody(new TekilError('NOT_FOUND', `no route ${req.method} ${req.url}`), errorLanguage(req.headers['accept-language'])));
  });

  // server.close() drops only connections idle at that instant; one busy then would stay open for the
  // whole keep-alive timeout once its response is sent. Keep dropping idle ones until closed.
  let idleReaper: NodeJS.Timeout | undefined;
  app.addHook('preClose', async () => {
    idleReaper = setInterval(() => app.server.closeIdleConnections(), 50);
    idleReaper.unref();
  });
  app.addHook('onClose', async () => clearInterval(idleReaper));

  app.get('/healthz', async () => ({ status: 'ok' }));
  const maintenance = storeMaintenance(ctx.db);
  app.get('/readyz', async (_req, reply) => {
    try {
      await storeAnswers.run(ctx.db);
      // Ready either way; the details say what an operator should look at (autovacuum off).
      const details = await maintenance();
      return Object.keys(details).length === 0 ? { status: 'ready', store: ctx.db.kind } : { status: 'ready', store: ctx.db.kind, details };
    } catch (err) {
      return reply.code(503).send(new TekilError('STORE_UNAVAILABLE', 'store unreachable', { cause: err }).toJSON());
    }
  });
  // With server.metrics_port set, /metrics is served there instead (runtime.ts), not on this public port.
  if (server.metrics_port === undefined) {
    const metricsToken = ctx.settings.metricsToken;
    app.get('/metrics', async (req, reply) => {
      if (metricsToken !== undefined && !metricsTokenMatches(metricsToken, req.headers.authorization)) {
        throw new TekilError('UNAUTHORIZED', 'missing or wrong metrics token (Authorization: Bearer <TEKIL_METRICS_TOKEN>)');
      }
      reply.header('content-type', ctx.metrics.contentType);
      return readMetrics ? readMetrics() : ctx.metrics.metrics();
    });
  }

  if (roles.has('receiver')) {
    let inbox = batcher;
    if (!inbox) {
      const owned = createInboxBatcher(ctx);
      await owned.start();
      // onClose runs after in-flight requests are answered: then the queue is flushed.
      app.addHook('onClose', async () => owned.stop());
      inbox = owned;
    }
    await app.register(receiverRoutes, { ctx, batcher: inbox });
  }
  if (roles.has('api')) {
    if (!adminToken) throw new TekilError('CONFIG_INVALID', 'the api role needs an admin token');
    await app.register(adminApi, { prefix: '/api/v1', ctx, adminToken });
    await app.register(jwksRoutes, { db: ctx.db });
    await app.register(panelRoutes);
    await app.register(portalRoutes, {
      db: ctx.db,
      logger: ctx.logger,
      frameAncestors: ctx.config.portal.frame_ancestors,
      logoUrl: ctx.config.portal.logo_url,
    });
  }
  return app;
}

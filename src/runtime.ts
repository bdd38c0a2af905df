import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import type { TekilConfig } from './config/schema.js';
import { buildApp } from './app.js';
import { createLogger, type Logger } from './logger.js';
import { createMetricsRegistry } from './metrics.js';
import type { Db } from './store/db.js';
import { openConfiguredStore } from './store/open.js';
import { migrate } from './store/migrate.js';
import { storeMaintenance } from './store/maintenance.js';
import { resolveAdminToken, type AdminToken } from './auth/admin-token.js';
import { roleNames, type Context, type Role, type Service } from './service.js';
import { createDispatcherService } from './outbox/parts.js';
import { createInboxBatcher, type InboxBatcher } from './receiver/batcher.js';
import { createInboxWorker } from './worker/worker.js';
import type { HandlerRegistry } from './worker/handlers.js';
import { resolveSettings } from './settings.js';
import { portToBind, portUnavailable } from './http/port-check.js';
import { startMetricsListener } from './http/metrics-listener.js';
import { registerReconcileMetrics } from './reconcile/metrics.js';
import { createReconcileScheduler } from './reconcile/scheduler.js';
import { createRetentionSweeper } from './retention/sweeper.js';
import { createAlertEvaluator } from './alerts/evaluator.js';
import { createStoreOutageReporter } from './alerts/store-outages.js';
import { createSignatureFailureFlusher } from './receiver/signature-failures.js';
import { startTelemetry } from './telemetry/start.js';
import type { Tracing } from './telemetry/tracing.js';

export interface StartOptions {
  config: TekilConfig;
  /** Roles to run; all of them when absent. Accepts role names as a Set or an array. */
  roles?: ReadonlySet<Role> | readonly Role[];
  /**
   * The environment to read settings from (DATABASE_URL, TEKIL_DATA_DIR, TEKIL_SECRET_KEY,
   * TEKIL_ADMIN_TOKEN, TEKIL_LOG_LEVEL); `process.env` when absent. Read once, here: every part gets
   * the result as `ctx.settings`.
   */
  env?: NodeJS.ProcessEnv;
  /** Defaults to a JSON logger at the settings' level. */
  logger?: Logger;
  /** Overrides PORT from `env` and config.server.port (0 picks a free port). */
  port?: number;
  host?: string;
  /** In-process handlers for the worker role (`defineHandlers().on(source, type, fn)`). */
  handlers?: HandlerRegistry;
  /**
   * Builds what /metrics answers from this process's registry; absent: the registry itself. The
   * supervisor of `tekil start --processes N` passes one that sums every process's metrics.
   */
  metricsReader?: (registry: Registry) => () => Promise<string>;
  /** An already open store to use instead of opening one from the config; the caller closes it. */
  db?: Db;
}

export interface RunningTekil {
  ctx: Context;
  app: FastifyInstance;
  /** The address the HTTP server listens on, e.g. http://127.0.0.1:8787. */
  url: string;
  /** Where /metrics is served when `server.metrics_port` is set (else it is `${url}/metrics`). */
  metricsUrl: string | undefined;
  adminToken: AdminToken | undefined;
  dataDir: string;
  /** Stops accepting, lets in-flight requests and background work finish, closes the store. */
  close(): Promise<void>;
}

/** Background parts by role. Each role's module adds its factory here. */
const serviceFactories: Partial<Record<Role, (ctx: Context, options: StartOptions, batcher: InboxBatcher | undefined) => Service>> = {
  worker: (ctx, options, batcher) => createInboxWorker(ctx, { handlers: options.handlers, ingest: batcher }),
  dispatcher: (ctx) => createDispatcherService(ctx),
};

export async function startTekil(options: StartOptions): Promise<RunningTekil> {
  const { config } = options;
  const settings = resolveSettings(config, options.env ?? process.env);
  const logger = options.logger ?? createLogger({ level: settings.logLevel });
  const roles: ReadonlySet<Role> = new Set(options.roles ?? roleNames);
  const ownsDb = !options.db;
  const db = options.db ?? (await openConfiguredStore(settings, config));
  const ctx: Context = { config, settings, db, logger, metrics: createMetricsRegistry() };
  const services: Service[] = [];
  let telemetry: Tracing | undefined;
  try {
    // Off (no endpoint): nothing is loaded and `telemetry` stays undefined.
    telemetry = await startTelemetry(config, settings.otlpEndpoint, logger);
    const applied = await migrate(db);
    if (applied.length) logger.info({ applied }, 'migrations applied');
    const { warning } = await storeMaintenance(db)();
    if (warning) logger.warn({ autovacuum: 'off' }, warning);
    // Started before listen and stopped after app.close(), so every answered request was flushed.
    const batcher = roles.has('receiver') ? createInboxBatcher(ctx) : undefined;
    if (batcher) services.push(batcher);
    for (const role of roles) {
      const factory = serviceFactories[role];
      if (factory) services.push(factory(ctx, options, batcher));
    }
    // Scheduled reconciles (sources with reconcile.every) run in the worker role; findings are counted for every role.
    if (roles.has('worker')) services.push(createReconcileScheduler(ctx));
    // Retention sweeps in the worker role too: a role every deployment runs, and one that already writes the inbox.
    if (roles.has('worker')) services.push(createRetentionSweeper(ctx));
    // Alerts too (one process at a time evaluates; docs/alerts.md).
    if (roles.has('worker') && ctx.config.alerts.enabled) services.push(createAlertEvaluator(ctx));
    if (roles.has('receiver') && ctx.config.alerts.enabled && ctx.config.alerts.rules.signature_failures.enabled)
      services.push(createSignatureFailureFlusher(ctx));
    // Every role: whichever process saw the store fail reports the outage once it answers again.
    if (ctx.config.alerts.enabled && ctx.config.alerts.rules.store_unreachable.enabled) services.push(createStoreOutageReporter(ctx));
    registerReconcileMetrics(ctx);
    const adminToken = roles.has('api') ? resolveAdminToken(settings) : undefined;
    const readMetrics = options.metricsReader?.(ctx.metrics);
    const app = await buildApp({
      ctx,
      roles,
      ...(adminToken ? { adminToken: adminToken.token } : {}),
      ...(batcher ? { batcher } : {}),
      ...(readMetrics ? { readMetrics } : {}),
    });
    for (const s of services) await s.start();
    const host = options.host ?? config.server.host;
    const port = portToBind(options, settings.port, config.server.port);
    const url = await app.listen({ host, port: port.port }).catch((err: unknown) => {
      throw portUnavailable({ host, ...port }, err) ?? err;
    });
    const metricsPort = config.server.metrics_port;
    const metrics =
      metricsPort === undefined
        ? undefined
        : await startMetricsListener({
            host,
            port: metricsPort,
            token: settings.metricsToken,
            contentType: ctx.metrics.contentType,
            read: readMetrics ?? (() => ctx.metrics.metrics()),
          }).catch(async (err: unknown) => {
            await app.close();
            throw portUnavailable({ host, port: metricsPort, from: 'server.metrics_port' }, err) ?? err;
          });
    let closing: Promise<void> | undefined;
    return {
      ctx,
      app,
      url,
      metricsUrl: metrics?.url,
      adminToken,
      dataDir: settings.dataDir,
      close() {
        closing ??= (async () => {
          await metrics?.close();
          await app.close();
          logger.debug('http server closed');
          for (const s of [...services].reverse()) {
            await s.stop().catch((err: unknown) => logger.error({ err, service: s.name }, 'service stop failed'));
          }
          if (ownsDb) await db.close();
          // Last: the spans of the work the services finished while stopping are exported too.
          await telemetry?.shutdown();
        })();
        return closing;
      },
    };
  } catch (err) {
    for (const s of services.reverse()) await s.stop().catch(() => {});
    if (ownsDb) await db.close().catch(() => {});
    await telemetry?.shutdown();
    throw err;
  }
}

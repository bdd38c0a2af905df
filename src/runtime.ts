import type { FastifyInstance } from 'fastify';
import type { TekilConfig } from './config/schema.js';
import { buildApp } from './app.js';
import { createLogger, type Logger } from './logger.js';
import { createMetricsRegistry } from './metrics.js';
import { openStore } from './store/open.js';
import type { Db } from './store/db.js';
import { migrate } from './store/migrate.js';
import { resolveAdminToken } from './api/token.js';
import { roleNames, type Context, type Role, type Service } from './service.js';
import { createDispatcherService } from './outbox/context.js';
import { createInboxBatcher } from './receiver/batcher.js';
import { createInboxWorker } from './worker/worker.js';
import type { HandlerRegistry } from './worker/handlers.js';

export interface StartOptions {
  config: TekilConfig;
  /** Roles to run; all of them when absent. Accepts role names as a Set or an array. */
  roles?: ReadonlySet<Role> | readonly Role[];
  env?: NodeJS.ProcessEnv;
  logger?: Logger;
  /** Overrides config.server.port (0 picks a free port). */
  port?: number;
  host?: string;
  /** In-process handlers for the worker role (`defineHandlers().on(source, type, fn)`). */
  handlers?: HandlerRegistry;
  /** An already open store to use instead of opening one from the config; the caller closes it. */
  db?: Db;
}

export interface RunningTekil {
  ctx: Context;
  app: FastifyInstance;
  /** The address the HTTP server listens on, e.g. http://127.0.0.1:8787. */
  url: string;
  adminToken: { token: string; generated: boolean; file?: string } | undefined;
  dataDir: string;
  /** Stops accepting, lets in-flight requests and background work finish, closes the store. */
  close(): Promise<void>;
}

/** Background parts by role. Each role's module adds its factory here. */
const serviceFactories: Partial<Record<Role, (ctx: Context, options: StartOptions) => Service>> = {
  worker: (ctx, options) => createInboxWorker(ctx, { handlers: options.handlers }),
  dispatcher: (ctx, options) => createDispatcherService(ctx, options.env),
};

export function resolveStoreSettings(config: TekilConfig, env: NodeJS.ProcessEnv): { databaseUrl?: string; dataDir: string } {
  const databaseUrl = env.DATABASE_URL || config.store.url || undefined;
  const dataDir = env.TEKIL_DATA_DIR || config.store.data_dir || './.tekil';
  return databaseUrl ? { databaseUrl, dataDir } : { dataDir };
}

export async function startTekil(options: StartOptions): Promise<RunningTekil> {
  const env = options.env ?? process.env;
  const logger = options.logger ?? createLogger();
  const { config } = options;
  const roles: ReadonlySet<Role> = new Set(options.roles ?? roleNames);
  const store = resolveStoreSettings(config, env);
  const ownsDb = !options.db;
  const db = options.db ?? (await openStore({ databaseUrl: store.databaseUrl, dataDir: store.dataDir, poolSize: config.store.pool_size, preparedStatements: config.store.prepared_statements, disableJit: config.store.disable_jit }));
  const ctx: Context = { config, db, logger, metrics: createMetricsRegistry() };
  const services: Service[] = [];
  try {
    const applied = await migrate(db);
    if (applied.length) logger.info({ applied }, 'migrations applied');
    // Started before listen and stopped after app.close(), so every answered request was flushed.
    const batcher = roles.has('receiver') ? createInboxBatcher(ctx) : undefined;
    if (batcher) services.push(batcher);
    for (const role of roles) {
      const factory = serviceFactories[role];
      if (factory) services.push(factory(ctx, options));
    }
    const adminToken = roles.has('api') ? resolveAdminToken(env, store.dataDir) : undefined;
    const app = await buildApp({ ctx, roles, ...(adminToken ? { adminToken: adminToken.token } : {}), ...(batcher ? { batcher } : {}) });
    for (const s of services) await s.start();
    const url = await app.listen({ host: options.host ?? config.server.host, port: options.port ?? config.server.port });
    let closing: Promise<void> | undefined;
    return {
      ctx,
      app,
      url,
      adminToken,
      dataDir: store.dataDir,
      close() {
        closing ??= (async () => {
          await app.close();
          logger.debug('http server closed');
          for (const s of [...services].reverse()) {
            await s.stop().catch((err: unknown) => logger.error({ err, service: s.name }, 'service stop failed'));
          }
          if (ownsDb) await db.close();
        })();
        return closing;
      },
    };
  } catch (err) {
    for (const s of services.reverse()) await s.stop().catch(() => {});
    if (ownsDb) await db.close().catch(() => {});
    throw err;
  }
}

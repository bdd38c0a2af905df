import type { TekilConfig } from './config/schema.js';
import { TekilError } from './errors.js';

export const logLevels = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof logLevels)[number];

/**
 * Where endpoint secrets' encryption key comes from: the operator's TEKIL_SECRET_KEY, or a key file
 * that tekil generates into the data dir on first use (fine for one machine, wrong for several).
 */
export type SecretKeySource = { from: 'env'; key: string } | { from: 'file'; dataDir: string };

/**
 * What a process takes from its environment, read once by `startTekil` (or a CLI command) and handed
 * down on the context. Nothing below reads `process.env`: two tekils in one process (tests, an
 * embedding application) each get exactly the environment they were started with.
 */
export interface TekilSettings {
  /** Postgres connection string; undefined means the embedded store in `dataDir`. */
  databaseUrl: string | undefined;
  /** Embedded store, generated admin token and generated secret key live here. */
  dataDir: string;
  secretKey: SecretKeySource;
  /** The admin API's bearer token when the operator set one; otherwise one is generated into `dataDir`. */
  adminToken: string | undefined;
  logLevel: LogLevel;
  /** Where spans go (TEKIL_OTLP_ENDPOINT, else telemetry.otlp_endpoint); undefined: tracing is off. */
  otlpEndpoint: string | undefined;
  /** The HTTP port from `PORT` (as platforms that assign one set it); overrides server.port, `--port` overrides it. */
  port: number | undefined;
  /** TEKIL_METRICS_TOKEN: when set, a scrape of /metrics must send `Authorization: Bearer <it>`. */
  metricsToken: string | undefined;
}

export const DEFAULT_DATA_DIR = './.tekil';

/** Environment variables win over the configuration file, which wins over the defaults. */
export function resolveSettings(config: TekilConfig, env: NodeJS.ProcessEnv): TekilSettings {
  const dataDir = env.TEKIL_DATA_DIR || config.store.data_dir || DEFAULT_DATA_DIR;
  const secretKey = env.TEKIL_SECRET_KEY;
  return {
    databaseUrl: env.DATABASE_URL || config.store.url || undefined,
    dataDir,
    secretKey: secretKey ? { from: 'env', key: secretKey } : { from: 'file', dataDir },
    adminToken: env.TEKIL_ADMIN_TOKEN || undefined,
    logLevel: parseLogLevel(env.TEKIL_LOG_LEVEL),
    otlpEndpoint: env.TEKIL_OTLP_ENDPOINT || config.telemetry.otlp_endpoint || undefined,
    port: parsePortVariable(env.PORT),
    metricsToken: env.TEKIL_METRICS_TOKEN || undefined,
  };
}

function parsePortVariable(value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const port = Number(value);
  if (Number.isInteger(port) && port >= 0 && port <= 65535) return port;
  throw new TekilError('CONFIG_INVALID', `PORT: expected a port number from 0 to 65535, got "${value}"`);
}

function parseLogLevel(value: string | undefined): LogLevel {
  if (!value) return 'info';
  const level = value.trim().toLowerCase();
  if ((logLevels as readonly string[]).includes(level)) return level as LogLevel;
  throw new TekilError('CONFIG_INVALID', `TEKIL_LOG_LEVEL: unknown level "${value}"`, { hint: `use one of ${logLevels.join(', ')}` });
}

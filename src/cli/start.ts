import { availableParallelism } from 'node:os';
import type { Command } from 'commander';
import { migrate } from '../store/migrate.js';
import { resolveSettings, type TekilSettings } from '../settings.js';
import { roleNames, type Role } from '../service.js';
import { TekilError } from '../errors.js';
import { resolveAdminToken, type AdminToken } from '../auth/admin-token.js';
import { checkPortsFree, portToBind } from '../http/port-check.js';
import { createTerminalAwareLogger } from '../logger.js';
import { addConfigOption, loadCliConfig, parsePort } from './config.js';
import { loadHandlersModule } from './handlers-module.js';
import { Progress } from './progress.js';

function parseRoles(value: string | undefined): Set<Role> {
  if (!value || value === 'all') return new Set(roleNames);
  const roles = value.split(',').map((r) => r.trim());
  for (const r of roles) {
    if (!(roleNames as readonly string[]).includes(r)) {
      throw new TekilError('CONFIG_INVALID', `--role: unknown role "${r}" (expected ${roleNames.join(', ')} or all)`);
    }
  }
  return new Set(roles as Role[]);
}

function parseTimeScale(value: string): number {
  const n = Number(value);
  if (!(n > 0 && n <= 1000)) throw new TekilError('CONFIG_INVALID', `--time-scale: expected a number in (0, 1000], got "${value}"`);
  return n;
}

function parseProcesses(value: string): number | 'auto' {
  if (value === 'auto') return 'auto';
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 1024)
    throw new TekilError('CONFIG_INVALID', `--processes: expected auto or a whole number from 1 to 1024, got "${value}"`);
  return n;
}

/**
 * How many processes `tekil start` runs, and whether under a supervisor. `auto` (the default): one per
 * core when the roles serve HTTP traffic (receiver, api) on PostgreSQL, one otherwise; a single process
 * runs in the foreground without a supervisor. An explicit `--processes N` (1 included) on PostgreSQL
 * always runs supervised, so even one process is restarted when it dies. The embedded store lives
 * inside one process, so asking for more there is refused rather than quietly ignored.
 */
export function resolveProcessCount(
  asked: number | 'auto',
  roles: ReadonlySet<Role>,
  settings: Pick<TekilSettings, 'databaseUrl'>,
): { processes: number; supervised: boolean } {
  if (!settings.databaseUrl) {
    if (asked !== 'auto' && asked > 1) {
      throw new TekilError('PROCESSES_NEED_POSTGRES', `--processes ${asked}: the embedded store (no DATABASE_URL) is single-process`, {
        hint: 'set DATABASE_URL to a PostgreSQL server to run several processes, or leave --processes out',
      });
    }
    return { processes: 1, supervised: false };
  }
  if (asked !== 'auto') return { processes: asked, supervised: true };
  // One per core only for processes that serve HTTP alone: a process with the worker or dispatcher
  // role opens a pool per loop, and a copy per core of all of them on a big box would pass Postgres's
  // max_connections at start. Worker and dispatcher groups are sized with an explicit --processes.
  const httpOnly = [...roles].every((role) => role === 'receiver' || role === 'api');
  const processes = httpOnly ? availableParallelism() : 1;
  return { processes, supervised: processes > 1 };
}

interface StartCommandOptions {
  config?: string;
  port?: number;
  role?: string;
  timeScale?: number;
  processes: number | 'auto';
  handlers?: string;
}

/**
 * A first start makes the admin token before it opens the store; if the start then fails, the token
 * is already saved, and this says so (with the token) instead of leaving it to be found.
 */
async function reportTokenOnFailure<T>(adminToken: AdminToken | undefined, start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (err) {
    if (adminToken?.generated) {
      process.stderr.write(
        `admin token (made by this start and saved to ${adminToken.file}; \`npx tekil admin-token\` prints it again): ${adminToken.token}\n`,
      );
    }
    throw err;
  }
}

/**
 * The server's modules load when a command that runs it starts: the CLI's other commands (API clients,
 * signing) then start in a fraction of the time, without Fastify, the stores and the roles.
 */
const loadRuntime = () => import('../runtime.js');

export function registerStartCommand(program: Command): void {
  addConfigOption(
    program
      .command('start')
      .description('Run tekil: migrations, then the roles asked for (all by default) until SIGTERM/SIGINT.')
      .option('-p, --port <n>', 'HTTP port (overrides PORT and server.port)', parsePort)
      .option('--role <roles>', `comma-separated roles: ${roleNames.join(', ')}, or all`, 'all')
      .option(
        '--processes <n>',
        'processes sharing the port, under a supervisor that restarts them (auto: one per core for receiver/api on PostgreSQL, else 1 without a supervisor)',
        parseProcesses,
        'auto',
      )
      .option('--handlers <module>', "a module whose default export is the worker's handler registry (defineHandlers())")
      .option('--time-scale <factor>', 'multiply retry ladder gaps (overrides sending.time_scale; 0.001 for tests and demos)', parseTimeScale),
  ).action(async (opts: StartCommandOptions) => {
    const roles = parseRoles(opts.role);
    const { config, path } = await loadCliConfig(opts.config);
    if (opts.timeScale !== undefined) config.sending.time_scale = opts.timeScale;
    const settings = resolveSettings(config, process.env);
    const logger = await createTerminalAwareLogger({ level: settings.logLevel });
    const { clusterMetricsReader, isSupervisedProcess, reportReady, supervisedPort } = await import('../supervisor/child.js');
    const supervised = isSupervisedProcess();
    // The supervisor checked the port and made the admin token; its processes share both.
    let adminToken: AdminToken | undefined;
    if (!supervised) {
      const { processes, supervised: underSupervisor } = resolveProcessCount(opts.processes, roles, settings);
      const port = portToBind(opts, settings.port, config.server.port);
      // Before the store is opened and migrated: a start that cannot listen changes nothing.
      await checkPortsFree([
        { host: config.server.host, ...port },
        ...(config.server.metrics_port === undefined ? [] : [{ host: config.server.host, port: config.server.metrics_port, from: 'server.metrics_port' }]),
      ]);
      adminToken = roles.has('api') ? resolveAdminToken(settings) : undefined;
      if (underSupervisor) {
        const { superviseProcesses } = await import('./supervise.js');
        return reportTokenOnFailure(adminToken, () => superviseProcesses({ config, configPath: path, roles, processes, port: port.port, adminToken, logger }));
      }
    }
    const handlers = opts.handlers ? await loadHandlersModule(opts.handlers) : undefined;
    const port = (supervised ? supervisedPort(process.env) : undefined) ?? opts.port;
    const [{ startTekil }, { printStartBanner }] = await Promise.all([loadRuntime(), import('./banner.js')]);
    const running = await reportTokenOnFailure(adminToken, () =>
      startTekil({
        config,
        roles,
        logger,
        ...(port !== undefined ? { port } : {}),
        ...(handlers ? { handlers } : {}),
        ...(supervised ? { metricsReader: clusterMetricsReader } : {}),
      }),
    );
    if (supervised) reportReady(running.url);
    else printStartBanner(running, path, adminToken);
    let stopping = false;
    const shutdown = (signal: string) => {
      if (stopping) return;
      stopping = true;
      running.ctx.logger.info({ signal }, 'shutting down');
      const timer = setTimeout(() => {
        running.ctx.logger.error('shutdown timed out; exiting');
        process.exit(1);
      }, config.shutdown_timeout);
      timer.unref();
      running.close().then(
        () => process.exit(0),
        (err: unknown) => {
          running.ctx.logger.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
    };
    process.on('SIGTERM', () => shutdown('SIGTERM'));
    // Ctrl-C reaches the whole process group; a supervised process waits for its supervisor's SIGTERM,
    // so the supervisor knows the exit is a stop and not a crash to restart.
    process.on('SIGINT', () => (supervised ? undefined : shutdown('SIGINT')));
  });
}

/** `tekil migrate`: what `start` does first, alone, for deployments that migrate before rolling out. */
export function registerMigrateCommand(program: Command): void {
  addConfigOption(
    program.command('migrate').description('Apply pending database migrations (DATABASE_URL, or the embedded store in TEKIL_DATA_DIR / ./.tekil) and exit.'),
  ).action(async (opts: { config?: string }) => {
    const { config } = await loadCliConfig(opts.config);
    const { openConfiguredStore } = await import('../store/open.js');
    const db = await openConfiguredStore(resolveSettings(config, process.env), config, 1);
    try {
      // Each migration is its own transaction: one cut short by Ctrl-C is rolled back, and a rerun goes on.
      const progress = new Progress('migrate', {}, ' migrations');
      const applied = await migrate(db, (step) => progress.update({ done: step.done, total: step.total, at: step.name })).finally(() => progress.clear());
      process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'up to date\n');
    } finally {
      await db.close();
    }
  });
}

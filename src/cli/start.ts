import type { Command } from 'commander';
import { openConfiguredStore, startTekil } from '../runtime.js';
import { migrate } from '../store/migrate.js';
import { resolveSettings } from '../settings.js';
import { roleNames, type Role } from '../service.js';
import { TekilError } from '../errors.js';
import { addConfigOption, loadCliConfig, parsePort } from './config.js';
import { printStartBanner } from './banner.js';

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

export function registerStartCommand(program: Command): void {
  addConfigOption(
    program
      .command('start')
      .description('Run tekil: migrations, then the roles asked for (all by default) until SIGTERM/SIGINT.')
      .option('-p, --port <n>', 'HTTP port (overrides server.port)', parsePort)
      .option('--role <roles>', `comma-separated roles: ${roleNames.join(', ')}, or all`, 'all')
      .option('--time-scale <factor>', 'multiply retry ladder gaps (overrides sending.time_scale; 0.001 for tests and demos)', parseTimeScale),
  ).action(async (opts: { config?: string; port?: number; role?: string; timeScale?: number }) => {
    const roles = parseRoles(opts.role);
    const { config, path } = await loadCliConfig(opts.config);
    if (opts.timeScale !== undefined) config.sending.time_scale = opts.timeScale;
    const running = await startTekil({ config, roles, ...(opts.port !== undefined ? { port: opts.port } : {}) });
    printStartBanner(running, path);
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
    process.on('SIGINT', () => shutdown('SIGINT'));
  });
}

/** `tekil migrate`: what `start` does first, alone, for deployments that migrate before rolling out. */
export function registerMigrateCommand(program: Command): void {
  addConfigOption(
    program
      .command('migrate')
      .description('Apply pending database migrations (DATABASE_URL, or the embedded store in TEKIL_DATA_DIR / ./.tekil) and exit.'),
  ).action(async (opts: { config?: string }) => {
    const { config } = await loadCliConfig(opts.config);
    const db = await openConfiguredStore(resolveSettings(config, process.env), config, 1);
    try {
      const applied = await migrate(db);
      process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'up to date\n');
    } finally {
      await db.close();
    }
  });
}

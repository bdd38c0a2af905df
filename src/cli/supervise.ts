import { createServer } from 'node:net';
import type { TekilConfig } from '../config/schema.js';
import type { AdminToken } from '../auth/admin-token.js';
import type { Logger } from '../logger.js';
import { adminTokenLines } from './banner.js';
import { openConfiguredStore } from '../store/open.js';
import type { Role } from '../service.js';
import { resolveSettings } from '../settings.js';
import { migrate } from '../store/migrate.js';
import { startSupervisor } from '../supervisor/supervisor.js';

export interface SuperviseOptions {
  config: TekilConfig;
  configPath: string | undefined;
  roles: ReadonlySet<Role>;
  processes: number;
  /** --port, else PORT, else the configuration's server.port. */
  port: number;
  /** Made (or read) before the store was opened, so a failed first start can still show it. */
  adminToken: AdminToken | undefined;
  logger: Logger;
}

/** For `--port 0`: a port free right now, so every process (and every restart) binds the same one. */
async function freePort(host: string): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, host, resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * The primary of `tekil start --processes N`: migrates once, makes the admin token once (so N processes
 * do not each generate a different one), then forks the processes and waits until they are stopped.
 * Resolves after a graceful stop; rejects with PROCESS_CRASH_LOOP when a process cannot stay up.
 */
export async function superviseProcesses(options: SuperviseOptions): Promise<void> {
  const { config, roles, processes } = options;
  const { logger, adminToken } = options;
  const settings = resolveSettings(config, process.env);
  const db = await openConfiguredStore(settings, config, 1);
  try {
    const applied = await migrate(db);
    if (applied.length) logger.info({ applied }, 'migrations applied');
  } finally {
    await db.close();
  }
  const port = options.port === 0 ? await freePort(config.server.host) : options.port;
  const supervisor = startSupervisor({
    processes,
    port,
    logger,
    // The children drain within their own shutdown_timeout; the supervisor kills what is left a little later.
    shutdownTimeoutMs: config.shutdown_timeout + 2_000,
    onReady(url) {
      const lines = [
        `tekil listening on ${url} (config: ${options.configPath ?? 'none'}; ${processes} processes, roles: ${[...roles].join(', ')})`,
        `processes: ${[...supervisor.pids()].map(([slot, pid]) => `${slot}=pid ${pid}`).join(', ')}`,
        'store: PostgreSQL (DATABASE_URL)',
      ];
      lines.push(...adminTokenLines(adminToken));
      // On stderr: stdout carries the log lines (JSON when not a terminal), and the banner is not one.
      process.stderr.write(`${lines.join('\n')}\n`);
    },
  });
  process.on('SIGTERM', () => supervisor.stop('SIGTERM'));
  process.on('SIGINT', () => supervisor.stop('SIGINT'));
  await supervisor.done;
}

// tekil, started as `tekil start` would, without the CLI around it: the receiver role alone by default,
// BENCH_ROLES=all for every role (what `npm start` runs), or a comma list of roles (e.g. api).
// BENCH_PROCESSES=N (or auto: one per core) runs N processes under tekil's own supervisor, as
// `tekil start --processes N` does; the default, 1, runs one process without a supervisor.
// With the worker role, a handler that does nothing is registered for the bench's source, as an
// application registers its own (its effect is the application's cost, not tekil's): every delivery is
// processed and settles as done. BENCH_HANDLER=none registers none, so every delivery fails for want of
// a handler and is parked in the review queue, with a warning logged for each.
import { availableParallelism } from 'node:os';
import { resolveAdminToken } from '../../src/auth/admin-token.js';
import { superviseProcesses } from '../../src/cli/supervise.js';
import { createLogger } from '../../src/logger.js';
import { resolveSettings } from '../../src/settings.js';
import { loadConfigFile } from '../../src/config/load.js';
import { startTekil } from '../../src/runtime.js';
import { roleNames, type Role } from '../../src/service.js';
import { defineHandlers } from '../../src/worker/handlers.js';
import { clusterMetricsReader, isSupervisedProcess, reportReady, supervisedPort } from '../../src/supervisor/child.js';

const config = await loadConfigFile(process.env.BENCH_CONFIG!);
const wanted = process.env.BENCH_ROLES ?? 'receiver';
const roles: Role[] = wanted === 'all' ? [...roleNames] : (wanted.split(',') as Role[]);
const asked = process.env.BENCH_PROCESSES ?? '1';
const processes = asked === 'auto' ? availableParallelism() : Number(asked);
const port = Number(process.env.PORT);

if (processes > 1 && !isSupervisedProcess()) {
  // The supervisor prints "tekil listening on …" once every process is ready.
  const adminToken = roles.includes('api') ? resolveAdminToken(resolveSettings(config, process.env)) : undefined;
  const logger = createLogger({ level: resolveSettings(config, process.env).logLevel });
  await superviseProcesses({ config, configPath: process.env.BENCH_CONFIG, roles: new Set(roles), processes, port, adminToken, logger });
} else {
  const supervised = isSupervisedProcess();
  const running = await startTekil({
    config,
    roles: new Set(roles),
    ...(process.env.BENCH_HANDLER === 'none' ? {} : { handlers: defineHandlers().on('bench', '*', () => {}) }),
    port: supervised ? (supervisedPort(process.env) ?? port) : port,
    host: '127.0.0.1',
    ...(supervised ? { metricsReader: clusterMetricsReader } : {}),
  });
  if (supervised) reportReady(running.url);
  else process.stdout.write('ready\n');
  process.on('SIGTERM', () => void running.close().then(() => process.exit(0)));
}

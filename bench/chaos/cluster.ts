import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createExampleSchema } from '../../examples/orders/handlers.js';
import { parseConfig } from '../../src/config/load.js';
import { DestinationGuard } from '../../src/http/destination-guard.js';
import { endpointStore } from '../../src/outbox/endpoints.js';
import { createSecretBox } from '../../src/outbox/secrets.js';
import type { Db } from '../../src/store/db.js';
import { migrate } from '../../src/store/migrate.js';
import { createPostgresDb } from '../../src/store/postgres.js';
import { freePort } from '../../test/helpers/free-port.js';
import { startPrivatePostgres, type PrivatePostgres } from '../../test/helpers/private-postgres.js';
import { spawnTekil, type TekilProcess } from '../../test/helpers/tekil-process.js';
import { FORWARDED_SOURCE, HANDLED_SOURCE } from './plan.js';

export const roleGroups = ['receiver', 'worker', 'dispatcher'] as const;
export type RoleGroup = (typeof roleGroups)[number];

export const PROVIDER_SECRET = 'whsec_chaos_provider_secret';
const SECRET_KEY = 'chaos run secret key';
const FORWARD_SECRET = 'whsec_Y2hhb3MgZm9yd2FyZCBzZWNyZXQ=';

export interface ChaosCluster {
  pg: PrivatePostgres;
  /** The chaos run's own connection (its checks), not one of tekil's. */
  db: Db;
  /** The receivers' shared URL. */
  url: string;
  /** One supervisor (`tekil start --role <group> --processes N`) per role group. */
  groups: Record<RoleGroup, TekilProcess>;
  /** The live processes of a group: the supervisor's children, which the controller kills. */
  childPids(group: RoleGroup): number[];
  close(): Promise<void>;
}

/** Short leases and fast retries: a killed process's work comes back in seconds, not minutes. */
function chaosConfig(forwardUrl: string): string {
  const retry = '{ max_attempts: 40, base: 100ms, cap: 2s }';
  return `
store: { pool_size: 4 }
shutdown_timeout: 5s
worker: { batch_size: 100, concurrency: 2, lease: 6s, handler_timeout: 3s, poll_interval: 250ms }
sending:
  allow_networks: ["127.0.0.0/8"]
  dispatcher: { poll_interval: 250ms, lease_margin: 2s, concurrency: 32 }
sources:
  ${HANDLED_SOURCE}:
    scheme: paymos
    secrets: ["${PROVIDER_SECRET}"]
    event_id: body:event_id
    resource_id: body:data.invoice_id
    event_type: body:event_type
    occurred_at: body:occurred_at
    retry: ${retry}
    ordering:
      state: body:data.status
      states: [awaiting_payment, confirming, underpaid_waiting]
      terminal: [paid, paid_over, underpaid, expired, cancelled]
  ${FORWARDED_SOURCE}:
    scheme: paymos
    secrets: ["${PROVIDER_SECRET}"]
    event_id: body:event_id
    event_type: body:event_type
    retry: ${retry}
    forward: { url: "${forwardUrl}", secret: "${FORWARD_SECRET}", timeout: 3s }
`;
}

export async function startChaosCluster(options: { forwardUrl: string; outboxUrl: string; processesPerGroup: number }): Promise<ChaosCluster> {
  const pg = startPrivatePostgres(await freePort(), { maxConnections: 200 });
  const dir = mkdtempSync(join(tmpdir(), 'tekil-chaos-'));
  const db = createPostgresDb({ connectionString: pg.url, max: 4 });
  const groups: Partial<Record<RoleGroup, TekilProcess>> = {};
  try {
    await migrate(db);
    await createExampleSchema(db);
    const sending = parseConfig({ sending: { allow_networks: ['127.0.0.0/8'] } }).sending;
    const endpoints = endpointStore({ sending, box: createSecretBox(SECRET_KEY), guard: new DestinationGuard(sending.allow_networks) });
    await endpoints.create(db, {
      url: options.outboxUrl,
      event_types: ['invoice.credited'],
      ladder: Array(30).fill('250ms'),
      timeout: '3s',
      max_in_flight: 64,
    });
    writeFileSync(join(dir, 'tekil.yaml'), chaosConfig(options.forwardUrl));
    const env = { DATABASE_URL: pg.url, TEKIL_DATA_DIR: dir, TEKIL_SECRET_KEY: SECRET_KEY, TEKIL_LOG_LEVEL: 'warn' };
    const start = (group: RoleGroup) =>
      spawnTekil(
        [
          '-c',
          join(dir, 'tekil.yaml'),
          '-p',
          '0',
          '--role',
          group,
          '--processes',
          String(options.processesPerGroup),
          ...(group === 'worker' ? ['--handlers', 'examples/orders/tekil-handlers.ts'] : []),
        ],
        env,
        120_000,
      ).then((p) => (groups[group] = p));
    await Promise.all(roleGroups.map(start));
  } catch (err) {
    await Promise.all(Object.values(groups).map((p) => p.stop('SIGKILL')));
    await db.close().catch(() => {});
    pg.destroy();
    rmSync(dir, { recursive: true, force: true });
    throw new Error('the chaos cluster did not start', { cause: err });
  }
  const started = groups as Record<RoleGroup, TekilProcess>;
  return {
    pg,
    db,
    url: started.receiver.url,
    groups: started,
    childPids(group) {
      try {
        return execFileSync('pgrep', ['-P', String(started[group].child.pid)], { encoding: 'utf8' })
          .split('\n')
          .filter(Boolean)
          .map(Number);
      } catch {
        return []; // pgrep exits 1 when the supervisor has no child at this instant (one is restarting)
      }
    },
    async close() {
      await Promise.all(roleGroups.map((g) => started[g].stop('SIGTERM')));
      await db.close().catch(() => {});
      pg.destroy();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

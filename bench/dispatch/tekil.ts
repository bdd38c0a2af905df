// tekil's side of the sending benches (bench:dispatch, bench:peers): one endpoint on the sink, the
// messages published as an application publishes them, and a run of tekil's dispatcher over every
// delivery, made due again before each run.
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { parseConfig } from '../../src/config/load.js';
import type { TekilConfig } from '../../src/config/index.js';
import { createLogger } from '../../src/logger.js';
import { DestinationGuard } from '../../src/http/destination-guard.js';
import { Dispatcher } from '../../src/outbox/dispatcher.js';
import { endpointStore } from '../../src/outbox/endpoints.js';
import { publish } from '../../src/outbox/publish.js';
import { createSecretBox, type SecretBox } from '../../src/outbox/secrets.js';
import type { createPostgresDb } from '../../src/store/postgres.js';
import { backendCpu, cpuBetween } from '../lib/cpu.js';

type PostgresDb = ReturnType<typeof createPostgresDb>;
const PUBLISH_TX = 5_000;

export interface TekilDispatch {
  config: TekilConfig;
  box: SecretBox;
  guard: DestinationGuard;
  /** The published messages' payloads, in id order: what every side sends. */
  bodies: Buffer[];
  /** Deliveries a run sends, when a message fans out to more than one (default: one per body). */
  deliveries?: number;
}

/** One run of the dispatcher: deliveries a second, CPU per delivery (µs) of this process and of Postgres. */
export interface TekilDispatchRun {
  rate: number;
  nodeUs: number;
  postgresUs: number;
  /** This process's share of one core while it ran. */
  coreShare: number;
}

/** Creates the sink's endpoint and publishes `messages` messages (not timed by the benches). */
export async function setUpTekilDispatch(db: PostgresDb, options: { sinkUrl: string; concurrency: number; messages: number }): Promise<TekilDispatch> {
  const { sinkUrl, concurrency, messages } = options;
  const config = parseConfig({ sending: { allow_networks: ['127.0.0.0/8'], dispatcher: { concurrency } } });
  const box = createSecretBox(randomBytes(32).toString('base64'));
  const guard = new DestinationGuard(config.sending.allow_networks);
  const endpoints = endpointStore({ sending: config.sending, box, guard });
  // The endpoint's cap counts claimed deliveries, which run ahead of the requests: allow 6x.
  await endpoints.create(db, { url: sinkUrl, max_in_flight: 6 * concurrency });
  const chunks = Array.from({ length: Math.ceil(messages / PUBLISH_TX) }, (_, c) => c * PUBLISH_TX);
  const publishChunk = async (start: number) =>
    db.transaction(async (tx) => {
      for (let i = start; i < Math.min(start + PUBLISH_TX, messages); i++) {
        await publish(tx, { type: 'invoice.paid', resourceId: `inv_${i}`, data: { invoice_id: `inv_${i}`, amount: '125.00', currency: 'TRY' } });
      }
    });
  // Four publishing transactions side by side, like an application's request handlers.
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let start = chunks.shift(); start !== undefined; start = chunks.shift()) await publishChunk(start);
    }),
  );
  const { rows } = await db.query<{ payload: Buffer }>('SELECT payload FROM outbox_messages ORDER BY id');
  return { config, box, guard, bodies: rows.map((r) => Buffer.from(r.payload)) };
}

/** Every delivery due again as if new: state, attempts and failure streaks reset, the tables vacuumed. */
export async function resetDeliveries(db: PostgresDb): Promise<void> {
  await db.query(
    `UPDATE outbox_deliveries SET status = 'pending', attempts = 0, lease = NULL, next_attempt_at = now(),
       last_status_code = NULL, last_error = NULL, last_attempt_at = NULL, completed_at = NULL`,
  );
  await db.query('TRUNCATE outbox_attempts, outbox_queue');
  await db.query('INSERT INTO outbox_queue (tenant_id, delivery_id, endpoint_id) SELECT tenant_id, id, endpoint_id FROM outbox_deliveries');
  await db.query('UPDATE endpoints SET consecutive_failures = 0');
  await db.exec('VACUUM ANALYZE outbox_deliveries, outbox_queue, outbox_attempts, endpoints');
}

/**
 * Resets the deliveries, runs the dispatcher until every one is settled, and checks that each succeeded
 * with one attempt recorded. `around` runs just after the start and just before the stop (a profiler).
 */
export async function runTekilDispatch(
  db: PostgresDb,
  dbName: string,
  setup: TekilDispatch,
  around?: { started(): Promise<void>; finished(): Promise<void> },
): Promise<TekilDispatchRun> {
  const messages = setup.deliveries ?? setup.bodies.length;
  await resetDeliveries(db);
  const dispatcher = new Dispatcher({ db, sending: setup.config.sending, box: setup.box, guard: setup.guard, logger: createLogger({ level: 'warn' }) });
  await around?.started();
  const pgCpu0 = await backendCpu(db, dbName);
  const started = performance.now();
  const cpu0 = process.cpuUsage();
  await dispatcher.start();
  for (;;) {
    // This stops at the first unsettled row of the queue's due index; a count would scan the
    // queue ten times a second and take its CPU from the run being measured.
    const { rows: left } = await db.query<{ busy: boolean }>(
      'SELECT (SELECT delivery_id FROM outbox_queue WHERE NOT failed ORDER BY endpoint_id, next_attempt_at LIMIT 1) IS NOT NULL AS busy',
    );
    if (!left[0]!.busy) break;
    await new Promise((r) => setTimeout(r, 25)); // the end is seen at most 25 ms late
  }
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpu0);
  await around?.finished();
  const pgSeconds = cpuBetween(pgCpu0, await backendCpu(db, dbName));
  await dispatcher.stop();
  const { rows: check } = await db.query<{ ok: number; attempts: number }>(
    "SELECT count(*) FILTER (WHERE status = 'succeeded')::int AS ok, (SELECT count(*) FROM outbox_attempts)::int AS attempts FROM outbox_deliveries",
  );
  if (check[0]!.ok !== messages || check[0]!.attempts !== messages) {
    throw new Error(`tekil: ${check[0]!.ok} of ${messages} deliveries succeeded with ${check[0]!.attempts} attempts recorded`);
  }
  return {
    rate: messages / seconds,
    nodeUs: (cpu.user + cpu.system) / messages,
    postgresUs: (pgSeconds * 1e6) / messages,
    coreShare: (cpu.user + cpu.system) / 1e6 / seconds,
  };
}

// The two sides of the processing bench (bench:process), also run by bench:peers: tekil's worker over N
// pending deliveries, and N no-op jobs through graphile-worker with its documented high-throughput
// settings (https://worker.graphile.org/docs/performance): a local queue of 500 jobs, batched completion
// and failure (completeJobBatchDelay / failJobBatchDelay 0), a pool one larger than the concurrency.
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { pino } from 'pino';
import { Logger as GraphileLogger, run as runGraphile, runMigrations as migrateGraphile } from 'graphile-worker';
import { parseConfig } from '../../src/config/index.js';
import { createMetricsRegistry } from '../../src/metrics.js';
import { migrate } from '../../src/store/migrate.js';
import { createPostgresDb } from '../../src/store/postgres.js';
import { defineHandlers } from '../../src/worker/handlers.js';
import { createInboxWorker } from '../../src/worker/worker.js';
import { backendCpu, cpuBetween } from '../lib/cpu.js';
import { resolveSettings } from '../../src/settings.js';

/** Items per second, and CPU per item (µs) of this process and of the Postgres backends serving it. */
export interface Result {
  rate: number;
  nodeUs: number;
  postgresUs: number;
}

export async function benchTekil(url: string, dbName: string, options: { n: number; batch: number; loops: number }): Promise<Result> {
  const { n: N, batch: BATCH, loops: LOOPS } = options;
  const db = createPostgresDb({ connectionString: url, max: LOOPS + 2 });
  try {
    await migrate(db);
    // Realistic rows: a Paymos-like body, a distinct resource per delivery (so the per-resource
    // ordering check runs for every claim), provider time set.
    await db.query(
      `INSERT INTO inbox_deliveries (source, event_id, resource_id, event_type, occurred_at, body, content_type)
       SELECT 'bench', 'evt_' || i, 'inv_' || i, 'invoice.paid', now() - interval '1 hour' + i * interval '1 millisecond',
              convert_to('{"event_id":"evt_' || i || '","event_type":"invoice.paid","data":{"id":"inv_' || i || '","status":"paid"}}', 'UTF8'),
              'application/json'
       FROM generate_series(1, $1::int) AS i`,
      [N],
    );
    await db.exec('VACUUM ANALYZE inbox_deliveries, inbox_queue');
    await db.exec('CHECKPOINT'); // the backlog's pages written before the clock, as for every peer
    const config = parseConfig({
      worker: { batch_size: BATCH, concurrency: LOOPS, lease: '5m' },
      sources: { bench: { scheme: 'standard', secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'] } },
    });
    let handled = 0;
    const handlers = defineHandlers().on('bench', '*', () => {
      handled++;
    });
    const worker = createInboxWorker(
      { config, settings: resolveSettings(config, {}), db, logger: pino({ level: 'warn' }), metrics: createMetricsRegistry(false) },
      { handlers },
    );
    const pg0 = await backendCpu(db, dbName);
    const cpu0 = process.cpuUsage();
    const started = performance.now();
    // The service's own loop body: claim a batch, run it, commit; again at once while batches are full.
    await Promise.all(
      Array.from({ length: LOOPS }, async () => {
        while ((await worker.runOnce()) > 0);
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const pgSeconds = cpuBetween(pg0, await backendCpu(db, dbName));
    const check = await db.query<{ done: number; attempts: number }>(
      "SELECT (SELECT count(*) FROM inbox_deliveries WHERE status = 'done') AS done, (SELECT count(*) FROM inbox_attempts) AS attempts",
    );
    const { done, attempts } = check.rows[0]!;
    if (done !== N || attempts !== N || handled !== N) throw new Error(`tekil: expected ${N} done, got done=${done} attempts=${attempts} handled=${handled}`);
    return { rate: N / seconds, nodeUs: (cpu.user + cpu.system) / N, postgresUs: (pgSeconds * 1e6) / N };
  } finally {
    await db.close();
  }
}

export async function benchGraphile(url: string, dbName: string, options: { n: number; concurrency: number }): Promise<Result> {
  const { n: N, concurrency: GRAPHILE_CONCURRENCY } = options;
  await migrateGraphile({ connectionString: url, logger: new GraphileLogger(() => () => {}) });
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  pool.on('error', () => {}); // the database is dropped WITH (FORCE) after the run
  try {
    for (let from = 1; from <= N; from += 10_000) {
      await pool.query(
        `SELECT count(*) FROM graphile_worker.add_jobs(ARRAY(
           SELECT ROW('noop', json_build_object('event_id', 'evt_' || i), NULL, NULL, NULL, NULL, NULL, NULL)::graphile_worker.job_spec
           FROM generate_series($1::int, $2::int) AS i))`,
        [from, Math.min(from + 9_999, N)],
      );
    }
    await pool.query('VACUUM ANALYZE');
    let handled = 0;
    let finish!: () => void;
    const allHandled = new Promise<void>((resolve) => (finish = resolve));
    const pg0 = await backendCpu(pool, dbName);
    const cpu0 = process.cpuUsage();
    const started = performance.now();
    const runner = await runGraphile({
      connectionString: url,
      concurrency: GRAPHILE_CONCURRENCY,
      maxPoolSize: GRAPHILE_CONCURRENCY + 1,
      noHandleSignals: true,
      preset: { worker: { localQueue: { size: 500 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 } },
      pollInterval: 1000,
      logger: new GraphileLogger(() => () => {}),
      taskList: {
        noop: async () => {
          if (++handled === N) finish();
        },
      },
    });
    await allHandled;
    const pg1 = await backendCpu(pool, dbName); // while the runner's connections are still open
    await runner.stop(); // completions of the last jobs are committed before this resolves
    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const pgSeconds = cpuBetween(pg0, pg1);
    const left = await pool.query<{ n: string }>('SELECT count(*) AS n FROM graphile_worker.jobs');
    if (Number(left.rows[0]!.n) !== 0) throw new Error(`graphile-worker: ${left.rows[0]!.n} jobs left`);
    return { rate: N / seconds, nodeUs: (cpu.user + cpu.system) / N, postgresUs: (pgSeconds * 1e6) / N };
  } finally {
    await pool.end();
  }
}

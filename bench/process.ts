// npm run bench:process — end-to-end processing throughput (claim, run a no-op handler, complete) of
// tekil's worker over N pending deliveries, against N no-op jobs through graphile-worker on the same
// Postgres. Each system gets a fresh database, dropped afterwards; inserting the work is not timed.
//
//   TEKIL_BENCH_DATABASE_URL  server to use (default postgres://postgres@127.0.0.1:5432/postgres)
//   BENCH_N                   deliveries / jobs (default 100000)
//   BENCH_BATCH, BENCH_LOOPS  tekil worker.batch_size and worker.concurrency (default: tekil's own
//                             config defaults, so the figure is what an unconfigured worker does)
//   BENCH_GRAPHILE_CONCURRENCY graphile-worker concurrency (default 24)
//
// graphile-worker runs with its documented high-throughput settings
// (https://worker.graphile.org/docs/performance): concurrentJobs 24, maxPoolSize 25, a local queue of
// 500 jobs, batched completion and failure (completeJobBatchDelay / failJobBatchDelay 0).
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { pino } from 'pino';
import { Logger as GraphileLogger, run as runGraphile, runMigrations as migrateGraphile } from 'graphile-worker';
import { parseConfig } from '../src/config/index.js';
import { createMetricsRegistry } from '../src/metrics.js';
import { migrate } from '../src/store/migrate.js';
import { createPostgresDb } from '../src/store/postgres.js';
import { defineHandlers } from '../src/worker/handlers.js';
import { createInboxWorker } from '../src/worker/worker.js';
import { benchServerUrl, withFreshDatabase } from './lib/database.js';

const N = Number(process.env.BENCH_N ?? 100_000);
const workerDefaults = parseConfig({}).worker;
const BATCH = Number(process.env.BENCH_BATCH ?? workerDefaults.batch_size);
const LOOPS = Number(process.env.BENCH_LOOPS ?? workerDefaults.concurrency);
const GRAPHILE_CONCURRENCY = Number(process.env.BENCH_GRAPHILE_CONCURRENCY ?? 24);
const graphileVersion = (createRequire(import.meta.url)('graphile-worker/package.json') as { version: string }).version;

async function benchTekil(url: string): Promise<number> {
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
    await db.exec('VACUUM ANALYZE inbox_deliveries');
    const config = parseConfig({
      worker: { batch_size: BATCH, concurrency: LOOPS, lease: '5m' },
      sources: { bench: { scheme: 'standard', secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'] } },
    });
    let handled = 0;
    const handlers = defineHandlers().on('bench', '*', () => {
      handled++;
    });
    const worker = createInboxWorker({ config, db, logger: pino({ level: 'warn' }), metrics: createMetricsRegistry(false) }, { handlers });
    const started = performance.now();
    // The service's own loop body: claim a batch, run it, commit; again at once while batches are full.
    await Promise.all(
      Array.from({ length: LOOPS }, async () => {
        while ((await worker.runOnce()) > 0);
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const check = await db.query<{ done: number; attempts: number }>(
      "SELECT (SELECT count(*) FROM inbox_deliveries WHERE status = 'done') AS done, (SELECT count(*) FROM inbox_attempts) AS attempts",
    );
    const { done, attempts } = check.rows[0]!;
    if (done !== N || attempts !== N || handled !== N) throw new Error(`tekil: expected ${N} done, got done=${done} attempts=${attempts} handled=${handled}`);
    return N / seconds;
  } finally {
    await db.close();
  }
}

async function benchGraphile(url: string): Promise<number> {
  await migrateGraphile({ connectionString: url, logger: new GraphileLogger(() => () => {}) });
  const pool = new pg.Pool({ connectionString: url, max: 2 });
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
    await runner.stop(); // completions of the last jobs are committed before this resolves
    const seconds = (performance.now() - started) / 1000;
    const left = await pool.query<{ n: string }>('SELECT count(*) AS n FROM graphile_worker.jobs');
    if (Number(left.rows[0]!.n) !== 0) throw new Error(`graphile-worker: ${left.rows[0]!.n} jobs left`);
    return N / seconds;
  } finally {
    await pool.end();
  }
}

const fmt = (rate: number) => `${Math.round(rate).toLocaleString('en-US')}/s`;
console.log(`processing benchmark: ${N.toLocaleString('en-US')} no-op items on ${new URL(benchServerUrl).host}`);
const tekilRate = await withFreshDatabase('tekil_bench_process', benchTekil);
console.log(`tekil worker (batch ${BATCH}, ${LOOPS} loops): ${fmt(tekilRate)}`);
const graphileRate = await withFreshDatabase('tekil_bench_graphile', benchGraphile);
console.log(`graphile-worker ${graphileVersion} (concurrency ${GRAPHILE_CONCURRENCY}, local queue 500, batched completion): ${fmt(graphileRate)}`);
console.log(`ratio tekil / graphile-worker: ${(tekilRate / graphileRate).toFixed(2)}×`);

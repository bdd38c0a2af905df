// npm run bench:process — end-to-end processing throughput (claim, run a no-op handler, complete) of
// tekil's worker over N pending deliveries, against N no-op jobs through graphile-worker on the same
// Postgres. Each system gets a fresh database, dropped afterwards; inserting the work is not timed.
//
//   TEKIL_BENCH_DATABASE_URL  server to use (default postgres://postgres@127.0.0.1:5432/postgres)
//   BENCH_N                   deliveries / jobs (default 100000)
//   BENCH_BATCH, BENCH_LOOPS  tekil worker.batch_size and worker.concurrency (default: tekil's own
//                             config defaults, so the figure is what an unconfigured worker does)
//   BENCH_GRAPHILE_CONCURRENCY graphile-worker concurrency (default 24)
//   BENCH_ROUNDS              rounds of both sides, alternating which goes first (default 3)
//   BENCH_ONLY                'tekil' or 'graphile': run one side only (for profiling; prints no ratio)
//
// There is no HTTP on this path: the worker with a no-op handler is the store path itself (claim,
// resource locks, completion), so tekil's line is also its store-only line.
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
import { backendCpu, cpuBetween } from './lib/cpu.js';
import { benchServerUrl, withFreshDatabase } from './lib/database.js';
import { resolveSettings } from '../src/settings.js';

const N = Number(process.env.BENCH_N ?? 100_000);
const workerDefaults = parseConfig({}).worker;
const BATCH = Number(process.env.BENCH_BATCH ?? workerDefaults.batch_size);
const LOOPS = Number(process.env.BENCH_LOOPS ?? workerDefaults.concurrency);
const GRAPHILE_CONCURRENCY = Number(process.env.BENCH_GRAPHILE_CONCURRENCY ?? 24);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const graphileVersion = (createRequire(import.meta.url)('graphile-worker/package.json') as { version: string }).version;

/** Items per second, and CPU per item (µs) of this process and of the Postgres backends serving it. */
interface Result {
  rate: number;
  nodeUs: number;
  postgresUs: number;
}

async function benchTekil(url: string, dbName: string): Promise<Result> {
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
    const config = parseConfig({
      worker: { batch_size: BATCH, concurrency: LOOPS, lease: '5m' },
      sources: { bench: { scheme: 'standard', secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'] } },
    });
    let handled = 0;
    const handlers = defineHandlers().on('bench', '*', () => {
      handled++;
    });
    const worker = createInboxWorker({ config, settings: resolveSettings(config, {}), db, logger: pino({ level: 'warn' }), metrics: createMetricsRegistry(false) }, { handlers });
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

async function benchGraphile(url: string, dbName: string): Promise<Result> {
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

const fmt = (r: Result) =>
  `${Math.round(r.rate).toLocaleString('en-US')}/s (CPU per item: ${r.nodeUs.toFixed(0)} µs node, ${r.postgresUs.toFixed(0)} µs postgres)`;
console.log(`processing benchmark: ${N.toLocaleString('en-US')} no-op items on ${new URL(benchServerUrl).host}`);
const only = process.env.BENCH_ONLY;
const tekilLabel = `tekil worker (batch ${BATCH}, ${LOOPS} loops)`;
const graphileLabel = `graphile-worker ${graphileVersion} (concurrency ${GRAPHILE_CONCURRENCY}, local queue 500, batched completion)`;
const runTekil = async () => {
  const r = await withFreshDatabase('tekil_bench_process', benchTekil);
  console.log(`  ${tekilLabel}: ${fmt(r)}`);
  return r;
};
const runGraphileRound = async () => {
  const r = await withFreshDatabase('tekil_bench_graphile', benchGraphile);
  console.log(`  ${graphileLabel}: ${fmt(r)}`);
  return r;
};
// The machine's speed drifts over seconds, so one run of each side would compare two different
// machines. The sides alternate in ABBA order (tekil, graphile, graphile, tekil, …) and each side's
// figure is the median of its runs, so a drift in one direction cancels out.
const tekilRuns: Result[] = [];
const graphileRuns: Result[] = [];
for (let round = 0; round < ROUNDS; round++) {
  console.log(`round ${round + 1} of ${ROUNDS}`);
  const tekilFirst = round % 2 === 0;
  for (const side of tekilFirst ? ['tekil', 'graphile'] : ['graphile', 'tekil']) {
    if (side === 'tekil' && only !== 'graphile') tekilRuns.push(await runTekil());
    if (side === 'graphile' && only !== 'tekil') graphileRuns.push(await runGraphileRound());
  }
}
const median = (runs: Result[]): Result => {
  const sorted = [...runs].sort((a, b) => a.rate - b.rate);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
};
console.log(`median of ${ROUNDS}:`);
if (tekilRuns.length) console.log(`  ${tekilLabel}: ${fmt(median(tekilRuns))} (store-only: this path has no HTTP)`);
if (graphileRuns.length) console.log(`  ${graphileLabel}: ${fmt(median(graphileRuns))}`);
if (tekilRuns.length && graphileRuns.length) {
  const perRound = tekilRuns.map((t, i) => (t.rate / graphileRuns[i]!.rate).toFixed(2)).join(', ');
  console.log(`ratio tekil / graphile-worker: ${(median(tekilRuns).rate / median(graphileRuns).rate).toFixed(2)}× (per round: ${perRound})`);
}

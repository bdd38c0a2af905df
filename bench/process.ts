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
import { parseConfig } from '../src/config/index.js';
import { benchServerUrl, withFreshDatabase } from './lib/database.js';
import { benchGraphile, benchTekil, type Result } from './process/sides.js';

const N = Number(process.env.BENCH_N ?? 100_000);
const workerDefaults = parseConfig({}).worker;
const BATCH = Number(process.env.BENCH_BATCH ?? workerDefaults.batch_size);
const LOOPS = Number(process.env.BENCH_LOOPS ?? workerDefaults.concurrency);
const GRAPHILE_CONCURRENCY = Number(process.env.BENCH_GRAPHILE_CONCURRENCY ?? 24);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const graphileVersion = (createRequire(import.meta.url)('graphile-worker/package.json') as { version: string }).version;

const fmt = (r: Result) =>
  `${Math.round(r.rate).toLocaleString('en-US')}/s (CPU per item: ${r.nodeUs.toFixed(0)} µs node, ${r.postgresUs.toFixed(0)} µs postgres)`;
console.log(`processing benchmark: ${N.toLocaleString('en-US')} no-op items on ${new URL(benchServerUrl).host}`);
const only = process.env.BENCH_ONLY;
const tekilLabel = `tekil worker (batch ${BATCH}, ${LOOPS} loops)`;
const graphileLabel = `graphile-worker ${graphileVersion} (concurrency ${GRAPHILE_CONCURRENCY}, local queue 500, batched completion)`;
const runTekil = async () => {
  const r = await withFreshDatabase('tekil_bench_process', (url, name) => benchTekil(url, name, { n: N, batch: BATCH, loops: LOOPS }));
  console.log(`  ${tekilLabel}: ${fmt(r)}`);
  return r;
};
const runGraphileRound = async () => {
  const r = await withFreshDatabase('tekil_bench_graphile', (url, name) => benchGraphile(url, name, { n: N, concurrency: GRAPHILE_CONCURRENCY }));
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

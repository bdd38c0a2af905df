/**
 * npm run bench:peers — tekil against what a team would build instead, path by path, in one run:
 *   receive  verify the signature, keep the event, answer: tekil's receiver (as bench:ingest runs it) against
 *            Fastify + pg-boss send(), Fastify + BullMQ queue.add(), Fastify + one INSERT per request;
 *   process  claim, run a no-op handler, complete: tekil's worker against graphile-worker, pg-boss work()
 *            with batches, a BullMQ Worker (tekil keeps an attempt row per item, the peers none: printed);
 *   send     sign, POST to a local sink, record the attempt, retry on failure: tekil's dispatcher against
 *            a graphile-worker task, a pg-boss work() handler and a BullMQ Worker doing the same.
 * Process and send: throughput and CPU from draining a backlog, then latency (p50, p99) from a steady
 * phase on the same running worker at a fixed offered rate (bench/peers/latency.ts says what is measured).
 * BullMQ runs twice: on this machine's Redis (BENCH_REDIS_URL; its durability is read from the server and
 * printed) and as `bullmq-fsync` on a private redis-server the bench starts with `appendonly yes` and
 * `appendfsync always`. Rounds alternate the contenders' order (forwards, then backwards); the figures are
 * the medians of the rounds. Each ends with one line per path and peer: `tekil / <peer> (<path>) = <ratio>`.
 * The settings of every peer are listed in docs/performance.md ("Against what you would build instead").
 * A peer that cannot run (package missing, Redis unreachable) stops the bench with exit status 1.
 *
 * Knobs (environment):
 *   BENCH_ROUNDS (default 3)      BENCH_PATHS  comma list of receive,process,send (default all)
 *   BENCH_PEERS  comma list of insert,graphile-worker,pg-boss,bullmq,bullmq-fsync (default all)
 *   BENCH_MESSAGES  messages per run of send (default 20000)   BENCH_PROCESS_JOBS  jobs per run of process (default 100000)
 *   BENCH_SECONDS, BENCH_WARMUP   measured and warm-up seconds per receive run (default 10 and 3)
 *   BENCH_CONNECTIONS  wrk connections (default 64)   BENCH_PAYLOADS  signed requests prepared (default 200000)
 *   BENCH_CONCURRENCY  requests in flight when sending, every side (default 64)
 *   BENCH_LATENCY_RATE, BENCH_LATENCY_SECONDS  the steady phase after each process and send run: items
 *                 offered a second, the same for every side, and for how long (default 1000 and 3)
 *   BENCH_REDIS_URL  the machine's Redis (default redis://127.0.0.1:6379)
 *   BENCH_REDIS_SERVER  redis-server binary for bullmq-fsync (default /usr/bin/redis-server)
 *   TEKIL_BENCH_DATABASE_URL  Postgres server (default postgres://postgres@127.0.0.1:5432/postgres)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { medianBy } from './lib/cpu.js';
import { adminQuery, benchServerUrl, databaseUrl, freshDatabaseName } from './lib/database.js';
import { requireWrk } from './lib/http-load.js';
import { pathNames, peerNames, type PathBench, type PathName, type PeerName, type PeerRun, type RedisTargets } from './peers/contender.js';
import { setUpProcess, setUpSend } from './peers/paths.js';
import { setUpReceive } from './peers/receive.js';
import { machineRedisUrl, probeRedis, startFsyncRedis, type PrivateRedis } from './peers/redis.js';

function listOf<T extends string>(knob: string, allowed: readonly T[]): T[] {
  const asked = process.env[knob];
  if (!asked) return [...allowed];
  const names = asked
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  for (const n of names) {
    if (!(allowed as readonly string[]).includes(n)) {
      process.stderr.write(`${knob}: unknown name "${n}" (names: ${allowed.join(', ')})\n`);
      process.exit(2);
    }
  }
  return names as T[];
}

const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const paths = listOf('BENCH_PATHS', pathNames);
const peers = listOf('BENCH_PEERS', peerNames);
const messages = Number(process.env.BENCH_MESSAGES ?? 20_000);
// 100,000 on the processing path: with fewer, a side's fixed costs weigh in its rate (bench:process's own fair size).
const processJobs = Number(process.env.BENCH_PROCESS_JOBS ?? 100_000);
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const warmup = Number(process.env.BENCH_WARMUP ?? 3);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 64);
const payloads = Number(process.env.BENCH_PAYLOADS ?? 200_000);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 64);
const steady = { rate: Number(process.env.BENCH_LATENCY_RATE ?? 1000), seconds: Number(process.env.BENCH_LATENCY_SECONDS ?? 3) };

/** Every peer asked for must be able to run: its package installed, its Redis answering. */
async function checkPeers(): Promise<{ redis: RedisTargets; fsyncRedis?: PrivateRedis; missing: string[] }> {
  const require = createRequire(import.meta.url);
  const missing: string[] = [];
  const packages: Partial<Record<PeerName, string>> = {
    'graphile-worker': 'graphile-worker',
    'pg-boss': 'pg-boss',
    bullmq: 'bullmq',
    'bullmq-fsync': 'bullmq',
  };
  const versions: string[] = [];
  for (const peer of peers) {
    const name = packages[peer];
    if (!name) continue;
    try {
      versions.push(`${peer} ${(require(`${name}/package.json`) as { version: string }).version}`);
    } catch {
      missing.push(`${peer}: the package ${name} is not installed (npm ci installs the dev dependencies)`);
    }
  }
  const redis: RedisTargets = {};
  let fsyncRedis: PrivateRedis | undefined;
  if (peers.includes('bullmq')) {
    try {
      redis.bullmq = await probeRedis(machineRedisUrl);
    } catch (err) {
      missing.push(`bullmq: ${(err as Error).message}`);
    }
  }
  if (peers.includes('bullmq-fsync')) {
    try {
      fsyncRedis = await startFsyncRedis();
      redis['bullmq-fsync'] = fsyncRedis;
    } catch (err) {
      missing.push(`bullmq-fsync: ${(err as Error).message}${(err as Error).cause ? ` (${String((err as Error).cause)})` : ''}`);
    }
  }
  if (versions.length > 0) process.stdout.write(`peers: ${versions.join(', ')}\n`);
  return { redis, fsyncRedis, missing };
}

const fmt = (n: number | undefined, digits = 0) => (n === undefined ? '-' : n.toFixed(digits));

function row(label: string, r: PeerRun, durability: string): string {
  return `${label.padEnd(78)}${fmt(r.rate).padStart(8)}${fmt(r.p50ms, 1).padStart(9)}${fmt(r.p99ms, 1).padStart(9)}${fmt(r.nodeUs).padStart(7)}${fmt(r.postgresUs).padStart(7)}${fmt(r.redisUs).padStart(7)}   ${durability}`;
}
/** The run with the median rate, with the medians of the rounds' latencies. */
function medianRun(runs: readonly PeerRun[]): PeerRun {
  const latency = (key: 'p50ms' | 'p99ms') => {
    const known = runs.filter((r) => r[key] !== undefined);
    return known.length === 0 ? undefined : medianBy(known, (r) => r[key]!)[key];
  };
  return { ...medianBy(runs, (r) => r.rate), p50ms: latency('p50ms'), p99ms: latency('p99ms') };
}
const header = `${'contender'.padEnd(78)}${'items/s'.padStart(8)}${'p50 ms'.padStart(9)}${'p99 ms'.padStart(9)}${'node'.padStart(7)}${'pg'.padStart(7)}${'redis'.padStart(7)}   durability  (CPU per item in µs)`;

async function main(): Promise<number> {
  if (paths.includes('receive')) requireWrk();
  const { redis, fsyncRedis, missing } = await checkPeers();
  if (missing.length > 0) {
    process.stderr.write(`bench:peers: a peer cannot run:\n${missing.map((m) => `  ${m}\n`).join('')}`);
    await fsyncRedis?.stop();
    return 1;
  }
  process.stdout.write(`Postgres ${new URL(benchServerUrl).host}; ${rounds} rounds; paths ${paths.join(', ')}; peers ${peers.join(', ')}\n`);
  const dir = mkdtempSync(join(tmpdir(), 'tekil-peers-'));
  const dbNames: string[] = [];
  const summary: string[] = [];
  try {
    for (const path of paths) {
      const dbName = freshDatabaseName(`tekil_peers_${path}`);
      const dbUrl = databaseUrl(dbName);
      if (path !== 'process') {
        await adminQuery(`CREATE DATABASE ${dbName}`);
        dbNames.push(dbName);
      }
      const describe: Record<PathName, string> = {
        receive: `${payloads} signed requests, ${connections} connections, ${warmup}s warm-up + ${seconds}s measured per run`,
        process: `${processJobs} no-op jobs per run, every runner started first, the backlog committed when the clock starts; latency: ${steady.rate}/s for ${steady.seconds}s, enqueue to committed completion`,
        send: `${messages} messages per run to a local sink, ${concurrency} in flight; latency: ${steady.rate}/s for ${steady.seconds}s, enqueue to the sink`,
      };
      process.stdout.write(`\n== ${path}: ${describe[path]}\n`);
      const bench: PathBench =
        path === 'receive'
          ? await setUpReceive({ dir, dbUrl, dbName, peers, redis, payloads, seconds, warmup, connections })
          : path === 'process'
            ? setUpProcess({ messages: processJobs, peers, redis, steady })
            : await setUpSend({ dbUrl, dbName, messages, concurrency, peers, redis, steady });
      try {
        const runs = new Map(bench.contenders.map((c) => [c, [] as PeerRun[]]));
        for (let round = 0; round < rounds; round++) {
          process.stdout.write(`round ${round + 1} of ${rounds}\n`);
          const order = round % 2 === 0 ? bench.contenders : [...bench.contenders].reverse();
          for (const c of order) {
            const r = await c.run();
            runs.get(c)!.push(r);
            process.stdout.write(`  ${row(c.label, r, c.durability)}\n`);
          }
        }
        process.stdout.write(`median of ${rounds} (rate and CPU: the run with the median rate; p50, p99: the median of the rounds' own):\n  ${header}\n`);
        const tekil = bench.contenders.find((c) => c.name === 'tekil')!;
        const tekilRate = medianBy(runs.get(tekil)!, (r) => r.rate).rate;
        for (const c of bench.contenders) process.stdout.write(`  ${row(c.label, medianRun(runs.get(c)!), c.durability)}\n`);
        for (const c of bench.contenders) {
          if (c !== tekil) summary.push(`tekil / ${c.name} (${path}) = ${(tekilRate / medianBy(runs.get(c)!, (r) => r.rate).rate).toFixed(2)}`);
        }
      } finally {
        await bench.close();
      }
    }
    process.stdout.write(`\n${summary.join('\n')}\n`);
    return 0;
  } finally {
    await fsyncRedis?.stop();
    for (const name of dbNames) await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
}

// Each run's database is dropped WITH (FORCE) as soon as the run ends, and the peers' own pools
// (graphile-worker's, pg-boss's) may still hold an idle client to it: Postgres ends that client with
// 57P01 (admin_shutdown), which a pool without an 'error' listener raises as an uncaught error. That one
// is expected here; anything else still stops the bench.
process.on('uncaughtException', (err: Error & { code?: string }) => {
  if (err.code === '57P01') return;
  process.stderr.write(`${err.stack ?? String(err)}\n`);
  process.exit(1);
});

process.exit(await main()); // queue clients and agents may hold the event loop open

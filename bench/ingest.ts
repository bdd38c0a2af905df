/**
 * npm run bench:ingest — receiving throughput, one payload set, servers each in their own process:
 *   ceiling: bare Fastify answering 200 (what HTTP alone allows on this machine),
 *   naive:   verify + one INSERT … ON CONFLICT per request on a pg pool, a named (prepared) statement into a plain
 *            table of its own, no trigger (the hand-written receiver; Postgres only),
 *   tekil:   the receiver as `tekil start --role receiver` runs it (verify, extract, group commit); on the
 *            embedded store every role, as `npm start` runs it (the worker shares the one connection),
 *   hmac:    the ceiling's server checking each request's signature (one HMAC) before answering: the
 *            least any webhook receiver does (not run unless named in BENCH_SERVERS),
 *   http:    tekil's receiver app with a writer that answers without the store (bench/ingest/http-only.ts),
 *            each turn's requests together as the group commit answers a batch: what tekil's own HTTP work
 *            allows, between the ceiling and the real receiver,
 *   httpnow: the same, each request answered at once inside the callback that read it (not run unless
 *            named in BENCH_SERVERS): what that answering pattern costs on this machine,
 * and the store-only line: tekil's INSERT statement with the same rows, in tekil's mean batch size, back to
 * back without HTTP (the ceiling the store allows), measured in every round like the servers, after a
 * warm-up as long as theirs.
 * Requests are signed up front and replayed by wrk from a Lua script. Rounds alternate the servers' order
 * (forwards, then backwards); each figure is the median of its rounds, and tekil / store-only is also
 * printed per round. CPU per request: the server process's
 * (from /proc) and, on Postgres, the backends serving the bench database.
 *
 * Knobs (environment):
 *   BENCH_STORE          postgres (default) or pglite (the embedded store: tekil with every role, no naive server)
 *   TEKIL_BENCH_DATABASE_URL  Postgres server (default postgres://postgres@127.0.0.1:5432/postgres)
 *   BENCH_ROUNDS         rounds (default 3)          BENCH_SECONDS  measured seconds per run (default 15)
 *   BENCH_WARMUP         warm-up seconds (default 3) BENCH_CONNECTIONS  wrk connections (default 64)
 *   BENCH_PAYLOADS       signed requests prepared (default 250000)
 *   BENCH_SERVERS        comma list of ceiling,hmac,naive,http,httpnow,tekil,traced,baseline,store (default: all that
 *                        apply but hmac, httpnow, traced and baseline)
 *                        traced: tekil with tracing on (TEKIL_OTLP_ENDPOINT), its spans posted to a local OTLP/HTTP
 *                        sink in a process of its own (bench/ingest/otlp-sink.ts); printed against tekil as a ratio
 *                        baseline: tekil as another checkout runs it (BENCH_BASELINE=<its directory>, e.g. main's),
 *                        printed against tekil: what a change costs with telemetry off
 *   BENCH_MAX_IN_FLIGHT  tekil's receiver.max_in_flight (default: tekil's default)
 *   BENCH_NODE_ARGS      extra node flags for the servers, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"
 *   BENCH_PROCESSES      processes per server: 1 (default), N or auto (one per core), for the ceiling (node:cluster)
 *                        and tekil (its own supervisor, as `tekil start --processes N`); Postgres only for tekil
 *                        (the HTTP-only lines always run one process)
 */
import { NAIVE_TABLE, NAIVE_TABLE_SQL } from './ingest/naive-table.js';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { loadConfigFile } from '../src/config/load.js';
import { compileSources } from '../src/receiver/sources.js';
import type { InboxDeliveryRow } from '../src/store/sql/inbox/insert-deliveries.js';
import { createPgliteDb } from '../src/store/pglite.js';
import { createPostgresDb } from '../src/store/postgres.js';
import type { Db } from '../src/store/db.js';
import { migrate } from '../src/store/migrate.js';
import { backendCpu, cpuBetween, medianBy, processTreeCpu } from './lib/cpu.js';
import { adminQuery, databaseUrl, freshDatabaseName } from './lib/database.js';
import { preparePayloads, replayScript, requireWrk, runWrk, startServer, stopServer, type PreparedRequest, type WrkResult } from './lib/http-load.js';
import { storeOnly } from './ingest/store-only.js';
import { receiverInFlight } from '../src/receiver/batcher.js';

const store = process.env.BENCH_STORE === 'pglite' ? 'pglite' : 'postgres';
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const seconds = Number(process.env.BENCH_SECONDS ?? 15);
const warmup = Number(process.env.BENCH_WARMUP ?? 3);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 64);
const payloadCount = Number(process.env.BENCH_PAYLOADS ?? 250_000);
const SECRET = 'whsec_bench_secret_0123456789';
requireWrk();

const dir = mkdtempSync(join(tmpdir(), 'tekil-bench-'));
const dbName = freshDatabaseName('tekil_ingest_bench');
const dbUrl = databaseUrl(dbName);
const configFile = join(dir, 'tekil.yaml');

/** The rows tekil's receiver would write for these requests (its own extraction and header subset). */
async function rowsOf(requests: PreparedRequest[]): Promise<InboxDeliveryRow[]> {
  const source = compileSources(await loadConfigFile(configFile)).get('bench')!;
  return requests.map(({ body, headers }) => {
    const f = source.extract({ body, headers });
    return {
      source: 'bench',
      eventId: f.eventId,
      resourceId: f.resourceId,
      eventType: f.eventType,
      occurredAt: f.occurredAt,
      body,
      contentType: headers['content-type']!,
      headers: source.pickHeaders(headers),
    };
  });
}

/** Runs `fn` on a pg client of the bench database (Postgres only). */
async function onBenchDb<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: dbUrl });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

async function tekilBatchRows(port: number): Promise<number | undefined> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const sum = Number(/tekil_inbox_batch_rows_sum (\S+)/.exec(text)?.[1] ?? 0);
  const count = Number(/tekil_inbox_batch_rows_count (\S+)/.exec(text)?.[1] ?? 0);
  return count ? sum / count : undefined;
}

interface Run extends WrkResult {
  nodeUs: number;
  postgresUs: number | undefined;
  batchRows?: number | undefined;
}

interface Server {
  key: 'ceiling' | 'hmac' | 'naive' | 'http' | 'httpnow' | 'tekil' | 'traced' | 'baseline';
  name: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  runs: Run[];
}

let port = 18_400 + Math.floor(Math.random() * 500);
/** The traced line's collector (a process of its own), when BENCH_SERVERS names traced. */
let otlpSink: ChildProcess | undefined;
const OTLP_SINK = 'http://127.0.0.1:18390';
let round = 0;

async function measure(s: Server): Promise<void> {
  const stores = s.key === 'naive' || s.key === 'tekil' || s.key === 'traced' || s.key === 'baseline';
  const dataDir = join(dir, `data-${s.key}-${round}`);
  if (store === 'postgres' && stores)
    await onBenchDb(async (c) => {
      await c.query(NAIVE_TABLE_SQL);
      await c.query(`TRUNCATE inbox_deliveries, ${NAIVE_TABLE}`);
      await c.query('CHECKPOINT');
    });
  port++;
  const env: NodeJS.ProcessEnv = store === 'postgres' ? { ...s.env, DATABASE_URL: dbUrl } : { ...s.env, DATABASE_URL: '' };
  const child = await startServer(s.name, s.args, { ...env, TEKIL_DATA_DIR: dataDir, PORT: String(port) }, /ready|tekil listening/);
  try {
    const warm = await runWrk({ port, script: join(dir, 'requests.lua'), seconds: warmup, connections, offset: round * 997 });
    const pg0 = store === 'postgres' && stores ? await onBenchDb((c) => backendCpu(c, dbName)) : undefined;
    const node0 = processTreeCpu(child.pid!) ?? 0;
    const r = await runWrk({ port, script: join(dir, 'requests.lua'), seconds, connections, offset: warm.requests + round * 997 });
    const nodeUs = (((processTreeCpu(child.pid!) ?? 0) - node0) * 1e6) / r.requests;
    const postgresUs = pg0 ? (cpuBetween(pg0, await onBenchDb((c) => backendCpu(c, dbName))) * 1e6) / r.requests : undefined;
    const batchRows = s.key === 'tekil' || s.key === 'traced' || s.key === 'baseline' ? await tekilBatchRows(port) : undefined;
    s.runs.push({ ...r, nodeUs, postgresUs, batchRows });
    const pgText = postgresUs === undefined ? '' : `, Postgres ${postgresUs.toFixed(0)} µs`;
    process.stdout.write(
      `  ${s.name}: ${r.rps.toFixed(0)} req/s, p99 ${r.p99ms.toFixed(1)} ms, non-2xx ${r.non2xx}; CPU per request: server ${nodeUs.toFixed(0)} µs${pgText}${batchRows ? `; ${batchRows.toFixed(1)} rows per INSERT` : ''}${r.errors ? `; ${r.errors}` : ''}\n`,
    );
  } finally {
    await stopServer(child);
    if (store === 'pglite') rmSync(dataDir, { recursive: true, force: true });
  }
}

interface StoreOnlyRun {
  rate: number;
  line: string;
}

/**
 * The store-only line: tekil's INSERT in the batch size tekil reached (its latest run's mean), back to
 * back without HTTP. It takes its turn in every round like the servers, so the machine's drift during a
 * run weighs on both sides of the ratio alike.
 */
async function measureStoreOnly(rows: InboxDeliveryRow[], batchRows: number, inFlight: number): Promise<StoreOnlyRun> {
  let db: Db;
  if (store === 'postgres') {
    await onBenchDb(async (c) => c.query('TRUNCATE inbox_deliveries').then(() => c.query('CHECKPOINT')));
    db = createPostgresDb({ connectionString: dbUrl, max: inFlight });
  } else {
    db = await createPgliteDb(join(dir, 'store-only'));
    await migrate(db);
  }
  try {
    // A warm-up as long as the servers' (wrk's) before the measured run, on the rows after it: PGlite's
    // WebAssembly runs on baseline code until V8 has optimised it, and a first run paid for that alone.
    const warm = await storeOnly(db, rows, { batchRows, inFlight, seconds: warmup });
    const pg0 = store === 'postgres' ? await backendCpu(db, dbName) : undefined;
    const r = await storeOnly(db, rows.slice(warm.written), { batchRows, inFlight, seconds });
    const pgUs = pg0 ? ` Postgres ${((cpuBetween(pg0, await backendCpu(db, dbName)) * 1e6) / (r.rowsPerSecond * seconds)).toFixed(0)} µs,` : '';
    const line = `store-only (${store}, ${batchRows} rows per INSERT, ${inFlight} in flight): ${r.rowsPerSecond.toFixed(0)} rows/s, ${r.batchMs.toFixed(2)} ms per INSERT (slowest ${r.maxBatchMs.toFixed(0)} ms); CPU per row:${pgUs} bench process ${r.nodeUs.toFixed(0)} µs`;
    process.stdout.write(`  ${line}\n`);
    return { rate: r.rowsPerSecond, line };
  } finally {
    await db.close();
    rmSync(join(dir, 'store-only'), { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  if (store === 'postgres') {
    await adminQuery(`CREATE DATABASE ${dbName}`);
    const db = createPostgresDb({ connectionString: dbUrl, max: 1 });
    await migrate(db);
    await db.close();
  }
  try {
    const receiver = process.env.BENCH_MAX_IN_FLIGHT ? `receiver:\n  max_in_flight: ${Number(process.env.BENCH_MAX_IN_FLIGHT)}\n` : '';
    writeFileSync(configFile, `${receiver}sources:\n  bench:\n    scheme: paymos\n    secrets: ["${SECRET}"]\n    tolerance: 3600\n`);
    const { distinct, requests } = preparePayloads(join(dir, 'requests.bin'), { count: payloadCount, secret: SECRET });
    writeFileSync(join(dir, 'requests.lua'), replayScript(join(dir, 'requests.bin')));
    const inFlight = receiverInFlight((await loadConfigFile(configFile)).receiver, store);
    process.stdout.write(
      `store ${store}; ${payloadCount} signed requests (${distinct} distinct events, ${payloadCount - distinct} repeats); ${connections} connections; ${rounds} rounds of ${warmup}s warm-up + ${seconds}s measured\n`,
    );
    const tekilEnv = { TEKIL_LOG_LEVEL: 'warn', BENCH_CONFIG: configFile, BENCH_ROLES: process.env.BENCH_ROLES ?? (store === 'pglite' ? 'all' : 'receiver') };
    const all: Server[] = [
      { key: 'ceiling', name: 'ceiling (bare Fastify 200)', args: ['bench/ingest/ceiling.ts'], env: {}, runs: [] },
      { key: 'hmac', name: 'bare Fastify + HMAC check', args: ['bench/ingest/ceiling.ts'], env: { BENCH_CEILING_HMAC: SECRET }, runs: [] },
      { key: 'naive', name: 'naive (INSERT per request)', args: ['bench/ingest/naive.ts'], env: { BENCH_SECRET: SECRET }, runs: [] },
      { key: 'http', name: 'tekil HTTP only (no store)', args: ['bench/ingest/http-only.ts'], env: tekilEnv, runs: [] },
      { key: 'httpnow', name: 'tekil HTTP only, at once', args: ['bench/ingest/http-only.ts'], env: { ...tekilEnv, BENCH_HTTP_AT_ONCE: '1' }, runs: [] },
      { key: 'tekil', name: store === 'pglite' ? 'tekil (all roles, embedded)' : 'tekil (receiver)', args: ['bench/ingest/tekil.ts'], env: tekilEnv, runs: [] },
    ];
    const wanted = (process.env.BENCH_SERVERS ?? 'ceiling,naive,http,tekil,store').split(',');
    if (wanted.includes('traced')) {
      otlpSink = await startServer('otlp sink', ['bench/ingest/otlp-sink.ts'], { PORT: String(18_390) }, /otlp sink ready/);
      all.push({
        key: 'traced',
        name: 'tekil traced (OTLP on)',
        args: ['bench/ingest/tekil.ts'],
        env: { ...tekilEnv, TEKIL_OTLP_ENDPOINT: OTLP_SINK },
        runs: [],
      });
    }
    if (wanted.includes('baseline')) {
      const baseline = process.env.BENCH_BASELINE;
      if (!baseline) throw new Error('BENCH_SERVERS names baseline: set BENCH_BASELINE to the checkout to compare with (e.g. /path/to/main)');
      all.push({ key: 'baseline', name: 'tekil baseline checkout', args: [join(baseline, 'bench/ingest/tekil.ts')], env: tekilEnv, runs: [] });
    }
    const servers = all.filter((s) => wanted.includes(s.key) && !(s.key === 'naive' && store === 'pglite'));
    const tekilServer = servers.find((s) => s.key === 'tekil');
    const withStore = wanted.includes('store') && tekilServer !== undefined;
    const storeRows = withStore ? await rowsOf(requests) : [];
    const storeRuns: StoreOnlyRun[] = [];
    // Forwards in one round, backwards in the next; the store-only line is last going forwards, so the
    // first round's tekil run gives it its batch size, and each later one uses the latest tekil run's.
    const turns: Array<Server | 'store'> = [...servers, ...(withStore ? (['store'] as const) : [])];
    for (round = 0; round < rounds; round++) {
      process.stdout.write(`round ${round + 1} of ${rounds}\n`);
      for (const turn of round % 2 === 0 ? turns : [...turns].reverse()) {
        if (turn !== 'store') await measure(turn);
        else storeRuns.push(await measureStoreOnly(storeRows, Math.max(1, Math.round(tekilServer!.runs.at(-1)?.batchRows ?? 1)), inFlight));
      }
    }

    process.stdout.write(
      `\nmedian of ${rounds} rounds (by req/s)\n${'server'.padEnd(30)}${'req/s'.padStart(9)}${'p50 ms'.padStart(9)}${'p99 ms'.padStart(9)}${'non-2xx'.padStart(9)}   CPU per request\n`,
    );
    const med = new Map<string, Run>();
    for (const s of servers) {
      const r = medianBy(s.runs, (x) => x.rps);
      med.set(s.key, r);
      const cpu = `server ${r.nodeUs.toFixed(0)} µs${r.postgresUs === undefined ? '' : `, Postgres ${r.postgresUs.toFixed(0)} µs`}`;
      process.stdout.write(
        `${s.name.padEnd(30)}${r.rps.toFixed(0).padStart(9)}${r.p50ms.toFixed(2).padStart(9)}${r.p99ms.toFixed(2).padStart(9)}${String(r.non2xx).padStart(9)}   ${cpu}\n`,
      );
    }
    const tekil = med.get('tekil');
    const ceiling = med.get('ceiling');
    let storeRate: number | undefined;
    if (storeRuns.length > 0) {
      const median = medianBy(storeRuns, (x) => x.rate);
      storeRate = median.rate;
      process.stdout.write(`${median.line}\n`);
      if (tekilServer) {
        const perRound = tekilServer.runs.map((t, i) => (storeRuns[i] ? (t.rps / storeRuns[i]!.rate).toFixed(2) : '-')).join(', ');
        process.stdout.write(`tekil / store-only per round: ${perRound}\n`);
      }
    }
    const httpOnly = med.get('http');
    const hmacOnly = med.get('hmac');
    if (hmacOnly && ceiling) process.stdout.write(`bare + HMAC check / HTTP ceiling = ${(hmacOnly.rps / ceiling.rps).toFixed(2)}\n`);
    if (httpOnly && ceiling)
      process.stdout.write(
        `tekil HTTP only / HTTP ceiling = ${(httpOnly.rps / ceiling.rps).toFixed(2)} (what tekil's own HTTP work leaves of the ceiling, before the store)\n`,
      );
    const httpNow = med.get('httpnow');
    if (httpNow && ceiling) process.stdout.write(`tekil HTTP only, at once / HTTP ceiling = ${(httpNow.rps / ceiling.rps).toFixed(2)}\n`);
    if (tekil && ceiling) process.stdout.write(`tekil / HTTP ceiling = ${(tekil.rps / ceiling.rps).toFixed(2)}\n`);
    if (tekil && storeRate) process.stdout.write(`tekil / store-only = ${(tekil.rps / storeRate).toFixed(2)}\n`);
    const traced = med.get('traced');
    if (tekil && traced) {
      const spans = Number(await (await fetch(`${OTLP_SINK}/count`)).text());
      process.stdout.write(
        `tekil traced / tekil = ${(traced.rps / tekil.rps).toFixed(2)} (req/s), server CPU per request ${traced.nodeUs.toFixed(0)} vs ${tekil.nodeUs.toFixed(0)} µs; ${spans} spans reached the sink\n`,
      );
    }
    const baselineRun = med.get('baseline');
    if (tekil && baselineRun) process.stdout.write(`tekil / baseline checkout = ${(tekil.rps / baselineRun.rps).toFixed(2)} (req/s; telemetry off in both)\n`);
    if (tekil && med.get('naive')) process.stdout.write(`tekil / naive = ${(tekil.rps / med.get('naive')!.rps).toFixed(2)}\n`);
    if (tekil && store === 'postgres' && ceiling) {
      const ok = tekil.rps >= 0.5 * ceiling.rps && tekil.p99ms < 25 && tekil.non2xx === 0;
      process.stdout.write(`target (tekil >= 0.5 x HTTP ceiling, p99 < 25 ms, no non-2xx): ${ok ? 'met' : 'NOT met'}\n`);
    }
    if (tekil && store === 'pglite' && storeRate) {
      const ok = tekil.rps >= 0.5 * storeRate && tekil.p99ms < 50 && tekil.non2xx === 0;
      process.stdout.write(`target (tekil >= 0.5 x store-only, p99 < 50 ms, no non-2xx): ${ok ? 'met' : 'NOT met'}\n`);
    }
  } finally {
    if (otlpSink) await stopServer(otlpSink);
    if (store === 'postgres') await adminQuery(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();

// npm run bench:steady — a steady stream, not a flood: signed requests at a fixed rate against tekil
// with every role (receiver and worker together, as `npm start` runs it), and whether processing keeps
// up with receiving while the stream lasts. The ingest bench measures how fast tekil acknowledges a
// flood; this one measures what a moderate, sustained load leaves behind: the worker's backlog.
//
//   BENCH_STORE     pglite (default: the embedded store, where receiver and worker share one
//                   connection) or postgres (TEKIL_BENCH_DATABASE_URL, else the local server; a fresh
//                   database, dropped afterwards)
//   BENCH_RATE      requests per second (default 2500; 10% are repeats of a recent delivery)
//   BENCH_SECONDS   how long the stream lasts (default 15)
//   BENCH_ROUNDS    rounds (default 1)
//
// Per round it prints the same stream against the bare Fastify ceiling of bench:ingest (what the client
// and the machine add to any server's latency), then for tekil the acknowledgement latency (p50, p99, as the client saw it; and the share tekil
// itself timed at over 50 ms, which leaves out the client's own delays on a shared machine), the deliveries processed by the time the
// last request was answered against the distinct deliveries received (1.00 = the worker kept up), and
// how long after the last request every delivery had been processed.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { preparePayloads, startServer, stopServer, type PreparedRequest } from './lib/http-load.js';
import { withFreshDatabase } from './lib/database.js';

const store = process.env.BENCH_STORE === 'postgres' ? 'postgres' : 'pglite';
const rate = Number(process.env.BENCH_RATE ?? 2500);
const seconds = Number(process.env.BENCH_SECONDS ?? 15);
const rounds = Number(process.env.BENCH_ROUNDS ?? 1);
const SECRET = 'whsec_c3RlYWR5LXN0cmVhbS1iZW5jaC1zZWNyZXQ=';
/** Requests in flight at most; past this the stream falls behind its schedule (reported as late). */
const MAX_IN_FLIGHT = 256;

interface RoundResult {
  p50: number;
  p99: number;
  /** Share of acknowledgements tekil itself timed at over 50 ms (its tekil_inbox_ack_seconds histogram). */
  serverOver50ms: number;
  keptUp: number;
  drainSeconds: number;
  late: number;
}

async function metricSum(port: number, name: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  let sum = 0;
  for (const m of text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'gm'))) sum += Number(m[1]);
  return sum;
}

/** The share of tekil's own acknowledgement timings over 50 ms, from its histogram's buckets. */
async function serverShareOver50ms(port: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const within = Number(/^tekil_inbox_ack_seconds_bucket\{le="0\.05",source="bench"\} (\S+)$/m.exec(text)?.[1] ?? Number.NaN);
  const all = Number(/^tekil_inbox_ack_seconds_count\{source="bench"\} (\S+)$/m.exec(text)?.[1] ?? Number.NaN);
  return 1 - within / all;
}

/** The median and the 99th percentile of acknowledgement times (ms). */
function percentiles(latencies: number[]): { p50: number; p99: number } {
  const sorted = [...latencies].sort((a, b) => a - b);
  return { p50: sorted[Math.floor(sorted.length * 0.5)]!, p99: sorted[Math.floor(sorted.length * 0.99)]! };
}

/** Sends `requests` at `rate` a second; resolves with each request's acknowledgement time (ms) and how many ticks ran late. */
async function stream(port: number, requests: PreparedRequest[]): Promise<{ latencies: number[]; late: number }> {
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: 64 });
  const latencies: number[] = [];
  let sent = 0;
  let inFlight = 0;
  let late = 0;
  let failed: Error | undefined;
  const t0 = performance.now();
  while (sent < requests.length && !failed) {
    const due = Math.min(requests.length, Math.floor(((performance.now() - t0) / 1000) * rate));
    while (sent < due) {
      if (inFlight >= MAX_IN_FLIGHT) {
        late++;
        break;
      }
      const r = requests[sent++]!;
      const started = performance.now();
      inFlight++;
      pool
        .request({ path: '/in/bench', method: 'POST', body: r.body, headers: r.headers })
        .then(async (res) => {
          await res.body.text();
          if (res.statusCode !== 200) throw new Error(`tekil answered ${res.statusCode}`);
          latencies.push(performance.now() - started);
        })
        .catch((err: unknown) => (failed = err instanceof Error ? err : new Error(String(err))))
        .finally(() => inFlight--);
    }
    await sleep(2);
  }
  while (inFlight > 0) await sleep(5);
  await pool.close();
  if (failed) throw new Error('the stream failed', { cause: failed });
  return { latencies, late };
}

/** The same stream against the bare Fastify ceiling of bench:ingest: the client's and the machine's own latency. */
async function ceilingRound(requests: PreparedRequest[]): Promise<{ p50: number; p99: number; late: number }> {
  const port = 20_000 + Math.floor(Math.random() * 1000);
  const child = await startServer('ceiling', ['bench/ingest/ceiling.ts'], { PORT: String(port) }, /ready|listening/);
  try {
    const { latencies, late } = await stream(port, requests);
    return { ...percentiles(latencies), late };
  } finally {
    await stopServer(child);
  }
}

async function round(dir: string, n: number, requests: PreparedRequest[], distinct: number, databaseUrl: string): Promise<RoundResult> {
  const configFile = join(dir, 'tekil.yaml');
  writeFileSync(configFile, `sources:\n  bench:\n    scheme: paymos\n    secrets: ["${SECRET}"]\n    tolerance: 3600\n`);
  const port = 19_000 + Math.floor(Math.random() * 1000);
  const env = {
    TEKIL_LOG_LEVEL: 'warn',
    BENCH_CONFIG: configFile,
    BENCH_ROLES: 'all',
    DATABASE_URL: databaseUrl,
    TEKIL_DATA_DIR: join(dir, `data-${n}`),
    PORT: String(port),
  };
  const child = await startServer('tekil', ['bench/ingest/tekil.ts'], env, /ready|tekil listening/);
  try {
    const { latencies, late } = await stream(port, requests);
    const processedAtEnd = await metricSum(port, 'tekil_inbox_attempts_total');
    const serverOver50ms = await serverShareOver50ms(port);
    const ended = performance.now();
    let processed = processedAtEnd;
    while (processed < distinct && performance.now() - ended < 120_000) {
      await sleep(20);
      processed = await metricSum(port, 'tekil_inbox_attempts_total');
    }
    if (processed < distinct) throw new Error(`only ${processed} of ${distinct} deliveries were processed two minutes after the stream`);
    return {
      ...percentiles(latencies),
      serverOver50ms,
      keptUp: processedAtEnd / distinct,
      drainSeconds: (performance.now() - ended) / 1000,
      late,
    };
  } finally {
    await stopServer(child);
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'tekil-steady-'));
  try {
    const { requests, distinct } = preparePayloads(join(dir, 'requests.bin'), { count: rate * seconds, secret: SECRET });
    process.stdout.write(`store ${store}; ${rate} requests a second for ${seconds} s (${distinct} distinct deliveries); tekil with every role\n`);
    for (let n = 1; n <= rounds; n++) {
      const run = (url: string) => round(dir, n, requests, distinct, url);
      const ceiling = await ceilingRound(requests);
      process.stdout.write(
        `round ${n}: bare Fastify (the same client and stream, a server answering 200 at once): p50 ${ceiling.p50.toFixed(1)} ms, p99 ${ceiling.p99.toFixed(1)} ms` +
          `${ceiling.late ? `; the client fell behind its schedule ${ceiling.late} times` : ''}\n`,
      );
      const r = store === 'postgres' ? await withFreshDatabase('tekil_bench_steady', run) : await run('');
      process.stdout.write(
        `round ${n}: tekil: ack p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms (tekil's own timing: ${(r.serverOver50ms * 100).toFixed(2)}% over 50 ms); processed while the stream lasted: ${(r.keptUp * 100).toFixed(0)}% ` +
          `(1.00 = kept up: ${r.keptUp.toFixed(2)}); all processed ${r.drainSeconds.toFixed(1)} s after the last request` +
          `${r.late ? `; the client fell behind its schedule ${r.late} times (${MAX_IN_FLIGHT} requests in flight)` : ''}\n`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();

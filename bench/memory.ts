/**
 * npm run bench:memory — does a tekil process's memory stay flat while events flow through every
 * role? One process (test/fixtures/pipeline-process.ts) receives signed events over HTTP, its worker
 * runs a handler that publishes one outbox message per event, its dispatcher sends each to a sink.
 * After a warm-up, the events go in chunks; after each chunk has reached the sink, the process's RSS
 * is read after a full collection (--expose-gc) and as the kernel has it, and every second while
 * events flow. Prints the readings, min / max, the slope (MB per 100,000 events, least squares over
 * the collected readings) and whether RSS stayed within ±50 MB. Fresh database per run, dropped after.
 *
 * Knobs (environment):
 *   TEKIL_BENCH_DATABASE_URL  server (default postgres://postgres@127.0.0.1:5432/postgres)
 *   BENCH_EVENTS              events after the warm-up (default 1000000)
 *   BENCH_WARMUP_EVENTS       events before the first reading (default 20000)
 *   BENCH_CHUNK               events between two collected readings (default 50000)
 *   BENCH_CONCURRENCY         requests in flight (default 32)
 *   BENCH_BODY_BYTES          size of each event's body (default 1000)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withFreshDatabase } from './lib/database.js';
import { sendEvents, startPipeline, startSink, type Pipeline, type Sink } from './lib/pipeline.js';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 1_000_000);
const WARMUP = Number(process.env.BENCH_WARMUP_EVENTS ?? 20_000);
const CHUNK = Number(process.env.BENCH_CHUNK ?? 50_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const BODY_BYTES = Number(process.env.BENCH_BODY_BYTES ?? 1000);
const MB = 1024 * 1024;
const log = (line: string) => process.stdout.write(`${line}\n`);

/** Resolves once the sink has seen `count` requests (every event published and sent at least once). */
async function drained(sink: Sink, count: number, timeoutMs = 600_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (sink.received() < count) {
    if (Date.now() > deadline) throw new Error(`the sink saw ${sink.received()} of ${count} events`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function slopePer100k(points: Array<[events: number, bytes: number]>): number {
  const n = points.length;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const cov = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  const varx = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  return varx === 0 ? 0 : ((cov / varx) * 100_000) / MB;
}

async function measure(pipeline: Pipeline, sink: Sink): Promise<void> {
  const started = Date.now();
  await sendEvents(pipeline.url, { prefix: 'evt_w', count: WARMUP, concurrency: CONCURRENCY, bodyBytes: BODY_BYTES });
  await drained(sink, WARMUP);
  const collected: Array<[number, number]> = [[0, await pipeline.rssAfterGc()]];
  const raw: number[] = [];
  const sampler = setInterval(() => raw.push(pipeline.rssNow()), 1000);
  log(`warm-up: ${WARMUP} events in ${((Date.now() - started) / 1000).toFixed(0)} s; RSS after GC ${(collected[0]![1] / MB).toFixed(1)} MB`);
  try {
    for (let done = 0; done < EVENTS; ) {
      const count = Math.min(CHUNK, EVENTS - done);
      const t0 = Date.now();
      await sendEvents(pipeline.url, { prefix: `evt_${done}_`, count, concurrency: CONCURRENCY, bodyBytes: BODY_BYTES });
      done += count;
      await drained(sink, WARMUP + done);
      const rss = await pipeline.rssAfterGc();
      collected.push([done, rss]);
      log(
        `  ${done.toLocaleString('en')} events: RSS after GC ${(rss / MB).toFixed(1)} MB, now ${(pipeline.rssNow() / MB).toFixed(1)} MB (${(count / ((Date.now() - t0) / 1000)).toFixed(0)} events/s end to end)`,
      );
    }
  } finally {
    clearInterval(sampler);
  }
  const values = collected.map(([, b]) => b);
  const min = Math.min(...values) / MB;
  const max = Math.max(...values) / MB;
  log('\nsummary');
  log(`  events after warm-up     ${EVENTS.toLocaleString('en')} (sink received ${sink.received().toLocaleString('en')} in all)`);
  log(`  RSS after GC             min ${min.toFixed(1)} MB, max ${max.toFixed(1)} MB, spread ${(max - min).toFixed(1)} MB`);
  log(`  RSS sampled each second  min ${(Math.min(...raw) / MB).toFixed(1)} MB, max ${(Math.max(...raw) / MB).toFixed(1)} MB`);
  log(`  slope                    ${slopePer100k(collected).toFixed(2)} MB per 100,000 events`);
  const later = values.slice(1).map((b) => b / MB);
  if (later.length > 0) log(`  after the first chunk     min ${Math.min(...later).toFixed(1)} MB, max ${Math.max(...later).toFixed(1)} MB`);
  const median = [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]! / MB;
  log(
    `  target (every reading after GC within ±50 MB of their median, ${median.toFixed(1)} MB): ${min >= median - 50 && max <= median + 50 ? 'met' : 'NOT met'}`,
  );
}

const dataDir = mkdtempSync(join(tmpdir(), 'tekil-memory-'));
const sink = await startSink();
try {
  await withFreshDatabase('tekil_memory_bench', async (url) => {
    const pipeline = await startPipeline({ databaseUrl: url, dataDir, sinkUrl: sink.url });
    try {
      await measure(pipeline, sink);
    } finally {
      await pipeline.stop();
    }
  });
} finally {
  await sink.close();
  rmSync(dataDir, { recursive: true, force: true });
}

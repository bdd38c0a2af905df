// npm run bench:fair-process — the processing case of the fairness benchmark: a source floods the
// inbox with a backlog (a provider's retry storm) while another, quiet source keeps receiving a
// delivery now and then; how long the quiet source's deliveries wait to be processed, against the same
// quiet stream with nothing else queued. On Postgres, with tekil's worker defaults (batch 500, 2 claim
// loops) and in-process no-op handlers; a fresh database, dropped afterwards.
//
//   TEKIL_BENCH_DATABASE_URL  server to use (default postgres://postgres@127.0.0.1:5432/postgres)
//   BENCH_FLOOD     the flooding source's backlog (default 100000)
//   BENCH_QUIET     the quiet source's deliveries per phase (default 200)
//   BENCH_GAP_MS    the gap between two of them (default 20)
//
// Latency is received → processed as the store recorded both (received_at, processed_at: one clock).
// Goal: the quiet source's p99 with the flood ≤ 2 × its p99 alone. Prints PASS or FAIL.
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { parseConfig } from '../src/config/index.js';
import { createMetricsRegistry } from '../src/metrics.js';
import { resolveSettings } from '../src/settings.js';
import type { Db } from '../src/store/db.js';
import { migrate } from '../src/store/migrate.js';
import { createPostgresDb } from '../src/store/postgres.js';
import { defineHandlers } from '../src/worker/handlers.js';
import { createInboxWorker } from '../src/worker/worker.js';
import { benchServerUrl, withFreshDatabase } from './lib/database.js';

const FLOOD = Number(process.env.BENCH_FLOOD ?? 100_000);
const QUIET = Number(process.env.BENCH_QUIET ?? 200);
const GAP_MS = Number(process.env.BENCH_GAP_MS ?? 20);
const SECRET = 'whsec_ZmFpci1wcm9jZXNzLWJlbmNoLXNlY3JldA==';

interface Latency {
  p50: number;
  p99: number;
  max: number;
}

/** Inserts the quiet source's deliveries one at a time, GAP_MS apart; answers once all are processed. */
async function quietStream(db: Db, phase: string): Promise<Latency> {
  for (let i = 0; i < QUIET; i++) {
    await db.query(
      `INSERT INTO inbox_deliveries (source, event_id, event_type, body, content_type) VALUES ('quiet', $1, 'invoice.paid', '\\x7b7d', 'application/json')`,
      [`${phase}_${i}`],
    );
    await sleep(GAP_MS);
  }
  for (;;) {
    const left = await db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM inbox_deliveries WHERE source = 'quiet' AND event_id LIKE $1 AND status <> 'done'",
      [`${phase}_%`],
    );
    if (left.rows[0]!.n === 0) break;
    await sleep(50);
  }
  const res = await db.query<{ ms: number }>(
    "SELECT extract(epoch FROM processed_at - received_at)::float8 * 1000 AS ms FROM inbox_deliveries WHERE source = 'quiet' AND event_id LIKE $1 ORDER BY 1",
    [`${phase}_%`],
  );
  const ms = res.rows.map((r) => r.ms);
  const at = (q: number) => ms[Math.min(ms.length - 1, Math.ceil(q * ms.length) - 1)]!;
  return { p50: at(0.5), p99: at(0.99), max: ms[ms.length - 1]! };
}

async function floodDone(db: Db): Promise<number> {
  const res = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM inbox_deliveries WHERE source = 'flood' AND status = 'done'");
  return res.rows[0]!.n;
}

const fmt = (l: Latency) => `p50 ${l.p50.toFixed(1)} ms, p99 ${l.p99.toFixed(1)} ms, max ${l.max.toFixed(1)} ms`;

console.log(
  `fair processing: a source flooding ${FLOOD.toLocaleString('en-US')} deliveries, another sending ${QUIET} (one every ${GAP_MS} ms), on ${new URL(benchServerUrl).host}`,
);
await withFreshDatabase('tekil_bench_fair_process', async (url) => {
  const config = parseConfig({ sources: { flood: { scheme: 'standard', secrets: [SECRET] }, quiet: { scheme: 'standard', secrets: [SECRET] } } });
  const db = createPostgresDb({ connectionString: url, max: config.store.pool_size });
  try {
    await migrate(db);
    const handlers = defineHandlers()
      .on('flood', '*', () => {})
      .on('quiet', '*', () => {});
    const worker = createInboxWorker(
      { config, settings: resolveSettings(config, {}), db, logger: pino({ level: 'warn' }), metrics: createMetricsRegistry(false) },
      { handlers },
    );
    await worker.start();
    try {
      const alone = await quietStream(db, 'alone');
      console.log(`  quiet source alone:          ${fmt(alone)}`);

      // The storm arrives all at once (one statement), received before every quiet delivery that follows.
      await db.query(
        `INSERT INTO inbox_deliveries (source, event_id, event_type, body, content_type)
         SELECT 'flood', 'flood_' || i, 'invoice.paid', '\\x7b7d', 'application/json' FROM generate_series(1, $1::int) AS i`,
        [FLOOD],
      );
      const started = performance.now();
      const flooded = await quietStream(db, 'flooded');
      const doneDuring = await floodDone(db);
      console.log(
        `  quiet source with the flood: ${fmt(flooded)} (flood processed meanwhile: ${doneDuring.toLocaleString('en-US')} of ${FLOOD.toLocaleString('en-US')})`,
      );
      while ((await floodDone(db)) < FLOOD) await sleep(100);
      const seconds = (performance.now() - started) / 1000;
      console.log(`  the flood drained in ${seconds.toFixed(1)} s (${Math.round(FLOOD / seconds).toLocaleString('en-US')}/s)`);
      const ratio = flooded.p99 / alone.p99;
      const overlapped = doneDuring < FLOOD;
      console.log(
        `quiet p99 with the flood / alone: ${ratio.toFixed(2)}× (goal ≤ 2×)${overlapped ? '' : ' — the flood drained before the quiet stream ended: raise BENCH_FLOOD'}: ${ratio <= 2 ? 'PASS' : 'FAIL'}`,
      );
    } finally {
      await worker.stop();
    }
  } finally {
    await db.close();
  }
});

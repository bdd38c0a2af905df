/**
 * npm run bench:growth — does tekil stay fast after years of rows? One fresh database per run,
 * dropped afterwards. Measured first on the empty store, then after filling it (generate_series in
 * SQL, not HTTP) with N settled inbox deliveries and N outbox messages (each with its delivery and
 * attempt) spread over 500 days:
 *   - ingest rate (the receiver role in its own process, driven by wrk): full / empty, target ≥ 0.9;
 *   - claim latency (the worker's claim statement, batches of 100, over 3,000 due deliveries): empty vs full;
 *   - admin lists with filters (inbox and outbox, first and second pages): p99, target < 100 ms;
 *   - ingest while the retention sweeper (its own process) trims bodies older than 30 days and
 *     deletes records older than 400 days: sweep / no sweep, target ≥ 0.8. The no-sweep figure is
 *     the mean of a run just before and one just after, as the machine's speed drifts.
 *
 * Knobs (environment):
 *   TEKIL_BENCH_DATABASE_URL  server (default postgres://postgres@127.0.0.1:5432/postgres)
 *   BENCH_N                   rows of history in each of inbox_deliveries and outbox (default 10000000)
 *   BENCH_SECONDS             each measured ingest run (default 15), after BENCH_WARMUP seconds (default 3)
 *   BENCH_CONNECTIONS         wrk connections (default 64)
 *   BENCH_PAYLOADS            signed requests prepared per ingest run (default 200000)
 *   BENCH_KEEP=1              keep the database (its name is printed) instead of dropping it
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { ChildProcess } from 'node:child_process';
import { listInbox } from '../src/inbox/list.js';
import type { InboxFilter } from '../src/inbox/filter.js';
import { listDeliveries, listMessages } from '../src/outbox/history.js';
import { EVERY_TENANT } from '../src/scope.js';
import { migrate } from '../src/store/migrate.js';
import { createPostgresDb } from '../src/store/postgres.js';
import type { Db } from '../src/store/db.js';
import { claimDueDeliveries } from '../src/worker/claim-due-deliveries.js';
import { adminQuery, databaseUrl, freshDatabaseName } from './lib/database.js';
import { preparePayloads, replayScript, requireWrk, runWrk, startServer, stopServer } from './lib/http-load.js';
import { fillHistory } from './growth/fill.js';

const N = Number(process.env.BENCH_N ?? 10_000_000);
const seconds = Number(process.env.BENCH_SECONDS ?? 15);
const warmup = Number(process.env.BENCH_WARMUP ?? 3);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 64);
const payloads = Number(process.env.BENCH_PAYLOADS ?? 200_000);
const SECRET = 'whsec_growth_secret_0123456789';
const SOURCE = 'bench';
const log = (line: string) => process.stdout.write(`${line}\n`);

requireWrk();
const dir = mkdtempSync(join(tmpdir(), 'tekil-growth-'));
const dbName = freshDatabaseName('tekil_growth_bench');
const dbUrl = databaseUrl(dbName);
let port = 18_900 + Math.floor(Math.random() * 500);
let run = 0;

/** One ingest run against a fresh receiver process, on fresh ids; `during` runs alongside it. */
async function ingest(label: string, config: string, during?: () => Promise<ChildProcess>): Promise<number> {
  run++;
  const data = join(dir, `requests-${run}.bin`);
  preparePayloads(data, { count: payloads, secret: SECRET, prefix: `evt_r${run}_` });
  const script = join(dir, `requests-${run}.lua`);
  writeFileSync(script, replayScript(data));
  port++;
  const env = { DATABASE_URL: dbUrl, TEKIL_DATA_DIR: dir, TEKIL_LOG_LEVEL: 'warn', BENCH_CONFIG: config, PORT: String(port) };
  const receiver = await startServer('receiver', ['bench/ingest/tekil.ts'], env, /ready/);
  try {
    const warm = await runWrk({ port, script, seconds: warmup, offset: 0, connections });
    const side = during ? await during() : undefined;
    let sideOut = '';
    side?.stdout?.on('data', (d: Buffer) => (sideOut += d.toString()));
    const measured = await runWrk({ port, script, seconds, offset: warm.requests, connections });
    if (side) {
      if (side.exitCode === null) await stopServer(side);
      log(`  sweeper during the run: ${sideOut.trim().split('\n').pop() ?? ''}`);
    }
    log(`  ingest ${label}: ${measured.rps.toFixed(0)} req/s (p99 ${measured.p99ms.toFixed(1)} ms, non-2xx ${measured.non2xx})`);
    return measured.rps;
  } finally {
    await stopServer(receiver);
  }
}

/** Queued ingest rows would be claimed by the claim probe: settle them (as a worker would have). */
async function settleIngested(db: Db): Promise<void> {
  await db.query(`DELETE FROM inbox_queue WHERE source = $1 AND NOT dead`, [SOURCE]);
  await db.query(`UPDATE inbox_deliveries SET status = 'done', final_outcome = 'done', attempts = 1 WHERE source = $1 AND status = 'pending'`, [SOURCE]);
}

/** Median and p99 of the claim statement, 100 at a time, over 3,000 due deliveries of a probe source. */
async function claimLatency(db: Db, probe: string): Promise<{ median: number; p99: number }> {
  await db.query(
    `INSERT INTO inbox_deliveries (source, event_id, resource_id, event_type, body) SELECT $1, 'evt_' || i, 'inv_' || i, 'invoice.paid', '\\x7b7d'::bytea FROM generate_series(1, 3000) i`,
    [probe],
  );
  await db.exec('ANALYZE inbox_queue');
  const times: number[] = [];
  for (;;) {
    const t0 = performance.now();
    const { rows } = await claimDueDeliveries(db, { limit: 100, leaseMs: 60_000, token: 'growth' });
    if (rows.length === 0) break;
    times.push(performance.now() - t0);
  }
  await db.query('DELETE FROM inbox_deliveries WHERE source = $1', [probe]);
  return { median: quantile(times, 0.5), p99: quantile(times, 0.99) };
}

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

/** The admin lists an operator uses, with filters, first and second pages: p99 over every call. */
async function adminLists(db: Db): Promise<{ p99: number; worst: string }> {
  const day = 86_400_000;
  const inboxFilters: Array<[string, InboxFilter]> = [
    ['all', {}],
    ['source', { source: SOURCE }],
    ['source+done', { source: SOURCE, status: 'done' }],
    ['type', { type: 'invoice.expired' }],
    ['resource', { resourceId: 'inv_h123457' }],
    ['window', { since: new Date(Date.now() - 200 * day), until: new Date(Date.now() - 199 * day) }],
    ['dead', { status: 'dead' }],
    ['source+type+window', { source: SOURCE, type: 'invoice.paid', since: new Date(Date.now() - 300 * day) }],
  ];
  const times: Array<[string, number]> = [];
  const time = async (name: string, fn: () => Promise<unknown>) => {
    const t0 = performance.now();
    await fn();
    times.push([name, performance.now() - t0]);
  };
  for (let round = 0; round < 20; round++) {
    for (const [name, filter] of inboxFilters) {
      let cursor: string | undefined;
      await time(`inbox ${name}`, async () => (cursor = (await listInbox(db, filter, { limit: 50 })).next_cursor ?? undefined));
      if (cursor) await time(`inbox ${name} page 2`, () => listInbox(db, filter, { limit: 50, cursor }));
    }
    await time('outbox deliveries endpoint+status', () => listDeliveries(db, EVERY_TENANT, { endpointId: 'ep_growth', status: 'succeeded', limit: 50 }));
    await time('outbox messages type', () => listMessages(db, EVERY_TENANT, { type: 'invoice.paid', limit: 50 }));
    await time('outbox messages resource', () => listMessages(db, EVERY_TENANT, { resourceId: 'inv_o4242', limit: 50 }));
  }
  const worst = [...times].sort((a, b) => b[1] - a[1])[0]!;
  return {
    p99: quantile(
      times.map(([, ms]) => ms),
      0.99,
    ),
    worst: `${worst[0]} ${worst[1].toFixed(1)} ms`,
  };
}

async function main(): Promise<void> {
  await adminQuery(`CREATE DATABASE ${dbName}`);
  const db = createPostgresDb({ connectionString: dbUrl, max: 2 });
  const plain = join(dir, 'plain.yaml');
  const swept = join(dir, 'retention.yaml');
  const sourceYaml = `sources:\n  ${SOURCE}:\n    scheme: paymos\n    secrets: ["${SECRET}"]\n    tolerance: 3600\n`;
  writeFileSync(plain, sourceYaml);
  writeFileSync(swept, `${sourceYaml}    retention: { bodies: 30d, records: 400d }\nsending:\n  retention: { bodies: 30d, records: 400d }\n`);
  try {
    await migrate(db);
    log(`database ${dbName}; N = ${N.toLocaleString('en')}; ${connections} connections, ${warmup}s warm-up + ${seconds}s per ingest run`);
    log('empty store:');
    const emptyRate = await ingest('empty', plain);
    await settleIngested(db);
    const emptyClaim = await claimLatency(db, 'probe-empty');
    log(`  claim: median ${emptyClaim.median.toFixed(2)} ms, p99 ${emptyClaim.p99.toFixed(2)} ms`);

    const fillStart = Date.now();
    log(`filling ${N.toLocaleString('en')} inbox deliveries and ${N.toLocaleString('en')} outbox messages:`);
    await fillHistory(db, SOURCE, N, log);
    const size = (await db.query<{ s: string }>(`SELECT pg_size_pretty(pg_database_size(current_database())) AS s`)).rows[0]!.s;
    log(`  filled in ${((Date.now() - fillStart) / 1000).toFixed(0)} s; database size ${size}`);

    log('full store:');
    const fullRate = await ingest('full', plain);
    await settleIngested(db);
    const fullClaim = await claimLatency(db, 'probe-full');
    log(`  claim: median ${fullClaim.median.toFixed(2)} ms, p99 ${fullClaim.p99.toFixed(2)} ms`);
    const lists = await adminLists(db);
    log(`  admin lists with filters: p99 ${lists.p99.toFixed(1)} ms (slowest call: ${lists.worst})`);

    log('retention sweep (bodies 30d, records 400d) during ingest:');
    const sweepRate = await ingest('with sweep', swept, () =>
      startServer('sweeper', ['bench/growth/sweep.ts'], { DATABASE_URL: dbUrl, BENCH_CONFIG: swept }, /sweeping/),
    );
    const afterRate = await ingest('full, after', plain);
    const noSweep = (fullRate + afterRate) / 2;

    const verdict = (ok: boolean) => (ok ? 'met' : 'NOT met');
    log('\nsummary');
    log(
      `  ingest full / empty        ${(fullRate / emptyRate).toFixed(2)}  (${fullRate.toFixed(0)} / ${emptyRate.toFixed(0)} req/s; target ≥ 0.9: ${verdict(fullRate >= 0.9 * emptyRate)})`,
    );
    log(
      `  claim median empty → full  ${emptyClaim.median.toFixed(2)} → ${fullClaim.median.toFixed(2)} ms (p99 ${emptyClaim.p99.toFixed(2)} → ${fullClaim.p99.toFixed(2)} ms)`,
    );
    log(`  admin lists p99            ${lists.p99.toFixed(1)} ms (target < 100 ms: ${verdict(lists.p99 < 100)})`);
    log(
      `  ingest sweep / no sweep    ${(sweepRate / noSweep).toFixed(2)}  (${sweepRate.toFixed(0)} / ${noSweep.toFixed(0)} req/s; target ≥ 0.8: ${verdict(sweepRate >= 0.8 * noSweep)})`,
    );
  } finally {
    await db.close();
    if (process.env.BENCH_KEEP !== '1') await adminQuery(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();

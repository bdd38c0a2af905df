/**
 * Dispatch throughput: 50,000 published messages delivered to a local sink that answers 200 at once,
 * against the ceiling of bare undici POSTs of the same bodies to the same sink at the same concurrency.
 * Both sides run in this process (the sink in its own); the ceiling gets an untimed warm-up round first
 * and is measured before and after the dispatcher. The per-delivery CPU figures of the dispatcher's
 * process and of Postgres show where the time goes on a machine they share.
 *
 *   npm run bench:dispatch            (Postgres: TEKIL_BENCH_DATABASE_URL, else TEKIL_TEST_DATABASE_URL,
 *                                      else postgres://postgres@127.0.0.1:5432/postgres)
 *   BENCH_MESSAGES=10000 npm run bench:dispatch
 *
 * Knobs (environment): BENCH_MESSAGES (default 50000), BENCH_CONCURRENCY (dispatcher.concurrency and the
 * bare client's, default 64), BENCH_ASYNC_COMMIT=1 (synchronous_commit off for the bench database),
 * BENCH_PROFILE=<file> (CPU profile of the dispatch phase). After the HTTP runs, a store-only line: the
 * same deliveries claimed and recorded by the dispatcher's statements in its sizes, without HTTP.
 */
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { parseConfig } from '../src/config/load.js';
import { createLogger } from '../src/logger.js';
import { DestinationGuard } from '../src/http/destination-guard.js';
import { Dispatcher, FLUSH_GROUP } from '../src/outbox/dispatcher.js';
import { endpointStore } from '../src/outbox/endpoints.js';
import { publish } from '../src/outbox/publish.js';
import { createSecretBox } from '../src/outbox/secrets.js';
import { createPostgresDb } from '../src/store/postgres.js';
import { migrate } from '../src/store/migrate.js';
import { backendCpu, cpuBetween } from './lib/cpu.js';
import { adminQuery, databaseUrl, freshDatabaseName } from './lib/database.js';
import { dispatchStoreOnly } from './dispatch/store-only.js';

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 50_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64);
const PUBLISH_TX = 5_000;

async function startSink(): Promise<{ url: string; stop(): void }> {
  const child = fork(fileURLToPath(new URL('./dispatch-sink.ts', import.meta.url)), [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  const port = await new Promise<string>((resolve) => child.stdout!.once('data', (d: Buffer) => resolve(d.toString().trim())));
  return { url: `http://127.0.0.1:${port}/hook`, stop: () => child.kill() };
}

/** The ceiling: CONCURRENCY loops of plain undici POSTs, no database, no signing. */
async function bareRate(url: string, bodies: Buffer[]): Promise<{ rate: number; cpuShare: number }> {
  const agent = new Agent({ keepAliveTimeout: 30_000 });
  let next = 0;
  const started = performance.now();
  const cpu0 = process.cpuUsage();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < bodies.length) {
        const body = bodies[next++]!;
        const res = await request(url, { dispatcher: agent, method: 'POST', body, headers: { 'content-type': 'application/json' } });
        await res.body.text();
        if (res.statusCode !== 200) throw new Error(`sink answered ${res.statusCode}`);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpu0);
  await agent.close();
  return { rate: bodies.length / seconds, cpuShare: (cpu.user + cpu.system) / 1e6 / seconds };
}

async function main(): Promise<void> {
  const name = freshDatabaseName('tekil_dispatch_bench');
  await adminQuery(`CREATE DATABASE ${name}`);
  if (process.env.BENCH_ASYNC_COMMIT) await adminQuery(`ALTER DATABASE ${name} SET synchronous_commit = off`);
  const dbUrl = databaseUrl(name);
  const db = createPostgresDb({ connectionString: dbUrl, max: 8 });
  const sink = await startSink();
  try {
    await migrate(db);
    const config = parseConfig({ sending: { allow_networks: ['127.0.0.0/8'], dispatcher: { concurrency: CONCURRENCY } } });
    const box = createSecretBox(randomBytes(32).toString('base64'));
    const guard = new DestinationGuard(config.sending.allow_networks);
    const endpoints = endpointStore({ sending: config.sending, box, guard });
    // The endpoint's cap counts claimed deliveries, which run ahead of the requests: allow 6x.
    await endpoints.create(db, { url: sink.url, max_in_flight: 6 * CONCURRENCY });

    process.stdout.write(`publishing ${MESSAGES} messages… `);
    let t0 = performance.now();
    const chunks = Array.from({ length: Math.ceil(MESSAGES / PUBLISH_TX) }, (_, c) => c * PUBLISH_TX);
    const publishChunk = async (start: number) =>
      db.transaction(async (tx) => {
        for (let i = start; i < Math.min(start + PUBLISH_TX, MESSAGES); i++) {
          await publish(tx, { type: 'invoice.paid', resourceId: `inv_${i}`, data: { invoice_id: `inv_${i}`, amount: '125.00', currency: 'TRY' } });
        }
      });
    // Four publishing transactions side by side, like an application's request handlers.
    await Promise.all(Array.from({ length: 4 }, async () => {
      for (let start = chunks.shift(); start !== undefined; start = chunks.shift()) await publishChunk(start);
    }));
    process.stdout.write(`${Math.round(MESSAGES / ((performance.now() - t0) / 1000))} msg/s (not timed below)\n`);
    const { rows } = await db.query<{ payload: Buffer }>('SELECT payload FROM outbox_messages');
    const bodies = rows.map((r) => Buffer.from(r.payload));
    // The ceiling is measured before and after the dispatcher's run, so a change in the machine's load
    // during the run shows instead of skewing the ratio.
    // A first, untimed round warms up undici's code (JIT) and the connections: without it the "before"
    // figure measures a cold client and understates the ceiling.
    await bareRate(sink.url, bodies.slice(0, Math.min(bodies.length, 10_000)));
    const before = await bareRate(sink.url, bodies);

    const dispatcher = new Dispatcher({ db, sending: config.sending, box, guard, logger: createLogger({ level: 'warn' }) });
    // BENCH_PROFILE=<file> writes a CPU profile of the dispatch phase (open it in Chrome DevTools).
    const profiler = process.env.BENCH_PROFILE ? new Session() : undefined;
    if (profiler) {
      profiler.connect();
      await profiler.post('Profiler.enable');
      await profiler.post('Profiler.start');
    }
    const pgCpu0 = await backendCpu(db, name);
    t0 = performance.now();
    const cpu0 = process.cpuUsage();
    await dispatcher.start();
    for (;;) {
      // This stops at the first unfinished row in the due index; a count would scan the table
      // ten times a second and take its CPU from the run being measured.
      const { rows: left } = await db.query<{ busy: boolean }>(
        "SELECT (SELECT id FROM outbox_deliveries WHERE status IN ('pending', 'sending') ORDER BY endpoint_id, next_attempt_at LIMIT 1) IS NOT NULL AS busy",
      );
      if (!left[0]!.busy) break;
      await new Promise((r) => setTimeout(r, 25)); // the end is seen at most 25 ms late
    }
    const dispatchSeconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    if (profiler) {
      const { profile } = await profiler.post('Profiler.stop');
      writeFileSync(process.env.BENCH_PROFILE!, JSON.stringify(profile));
      profiler.disconnect();
    }
    const cpuShare = (cpu.user + cpu.system) / 1e6 / dispatchSeconds;
    const pgCpuSeconds = cpuBetween(pgCpu0, await backendCpu(db, name));
    await dispatcher.stop();
    const { rows: check } = await db.query<{ ok: number; attempts: number }>(
      "SELECT count(*) FILTER (WHERE status = 'succeeded') AS ok, (SELECT count(*) FROM outbox_attempts) AS attempts FROM outbox_deliveries",
    );
    const dispatchRate = MESSAGES / dispatchSeconds;
    const after = await bareRate(sink.url, bodies);
    // Store-only: the same deliveries due again, claimed and recorded with the dispatcher's statements
    // and sizes but without HTTP. The ceiling the store allows this path.
    await db.query("UPDATE outbox_deliveries SET status = 'pending', lease = NULL, next_attempt_at = now()");
    await db.exec('VACUUM ANALYZE outbox_deliveries, outbox_attempts');
    const storePg0 = await backendCpu(db, name);
    const store = await dispatchStoreOnly(db, { batchSize: config.sending.dispatcher.batch_size, group: FLUSH_GROUP, leaseMarginMs: config.sending.dispatcher.lease_margin });
    const storePgUs = (cpuBetween(storePg0, await backendCpu(db, name)) * 1e6) / MESSAGES;
    const ceiling = (before.rate + after.rate) / 2;
    const bareCpu = (before.cpuShare + after.cpuShare) / 2;
    process.stdout.write(
      [
        `dispatcher: ${MESSAGES} deliveries in ${dispatchSeconds.toFixed(2)} s = ${Math.round(dispatchRate)} deliveries/s (succeeded ${check[0]!.ok}, attempts recorded ${check[0]!.attempts}; dispatcher process CPU ${(cpuShare * 100).toFixed(0)}% of one core)`,
        `  per delivery: dispatcher process ${Math.round((cpuShare * dispatchSeconds * 1e6) / MESSAGES)} µs CPU, Postgres backends ${Math.round((pgCpuSeconds * 1e6) / MESSAGES)} µs CPU`,
        `bare undici POSTs (ceiling, concurrency ${CONCURRENCY}): ${Math.round(ceiling)} requests/s (before ${Math.round(before.rate)}, after ${Math.round(after.rate)}; client CPU ${(bareCpu * 100).toFixed(0)}% of one core, ${Math.round((bareCpu * 1e6) / ceiling)} µs per request)`,
        `store-only (claims of ${config.sending.dispatcher.batch_size}, completions in groups of ${FLUSH_GROUP}, no HTTP): ${Math.round(store.rate)} deliveries/s; per delivery ${store.statementsPerItem.toFixed(3)} statements, bench process ${Math.round(store.nodeUs)} µs CPU, Postgres backends ${Math.round(storePgUs)} µs CPU`,
        `ratio to bare undici: ${(dispatchRate / ceiling).toFixed(2)} (target >= 0.6)   ratio to store-only: ${(dispatchRate / store.rate).toFixed(2)}`,
        '',
      ].join('\n'),
    );
  } finally {
    sink.stop();
    await db.close();
    await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
}

await main();

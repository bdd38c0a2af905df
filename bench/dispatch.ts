/**
 * Dispatch throughput: 50,000 published messages delivered to a local sink that answers 200 at once, in
 * rounds, each side in turn (forwards in one round, backwards in the next), medians of the rounds:
 *   bare:   plain undici POSTs of the same bodies to the same sink at the same concurrency (the ceiling:
 *           no database, no signing);
 *   floor:  the least any durable dispatcher does (bench/dispatch/floor.ts): a leased claim, one HMAC,
 *           the POST, one attempt row; what a sender that survives a crash and keeps every attempt
 *           cannot go below on this machine;
 *   tekil:  tekil's dispatcher, every delivery due again before its run (state and attempts reset,
 *           vacuumed);
 *   store:  the store-only line: the same deliveries claimed and recorded by the dispatcher's own
 *           statements in its sizes, without HTTP (the ceiling the store allows this path).
 * The sink runs in its own process; the sides run in this one, so their CPU per delivery is this
 * process's, next to the Postgres backends'. An untimed warm-up of the bare client and of the floor
 * comes first.
 *
 *   npm run bench:dispatch            (Postgres: TEKIL_BENCH_DATABASE_URL, else TEKIL_TEST_DATABASE_URL,
 *                                      else postgres://postgres@127.0.0.1:5432/postgres)
 *   BENCH_MESSAGES=10000 npm run bench:dispatch
 *
 * Knobs (environment): BENCH_MESSAGES (default 50000), BENCH_ROUNDS (default 3), BENCH_SIDES (comma list
 * of bare,floor,tekil,store; default all), BENCH_CONCURRENCY (dispatcher.concurrency and the other sides',
 * default 64), BENCH_ASYNC_COMMIT=1 (synchronous_commit off for the bench database),
 * BENCH_PROFILE=<file> (CPU profile of tekil's last dispatch run), BENCH_BROKERS (comma list of
 * rabbitmq,nats,redis; default all; `none` leaves them out).
 *
 * Then a line per broker kind (one run each, after the rounds): the broker's own client publishing the
 * same messages with the same confirms at the same concurrency, and tekil's dispatcher delivering them
 * to an endpoint of that kind (bench/dispatch/brokers.ts), against the machine's RabbitMQ (5672,
 * guest/guest), NATS JetStream (4222) and Redis (6379).
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import pg from 'pg';
import { Agent, request } from 'undici';
import { FLUSH_GROUP } from '../src/outbox/dispatcher.js';
import { createPostgresDb } from '../src/store/postgres.js';
import { migrate } from '../src/store/migrate.js';
import { backendCpu, cpuBetween, medianBy } from './lib/cpu.js';
import { adminQuery, databaseUrl, freshDatabaseName } from './lib/database.js';
import { dispatchStoreOnly } from './dispatch/store-only.js';
import { floorDispatch, refillFloor, setUpFloor } from './dispatch/floor.js';
import { resetDeliveries, runTekilDispatch, setUpTekilDispatch } from './dispatch/tekil.js';
import { startSinkProcess } from './lib/sink.js';
import { brokerClientRate, tekilBrokerRun } from './dispatch/brokers.js';
import { brokerKinds, type BrokerKind } from '../src/destinations/broker-url.js';

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 50_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64);

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

type Side = 'bare' | 'floor' | 'tekil' | 'store';
const ALL_SIDES: readonly Side[] = ['bare', 'floor', 'tekil', 'store'];
const SIDES: Side[] = process.env.BENCH_SIDES
  ? process.env.BENCH_SIDES.split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '')
      .map(toSide)
  : [...ALL_SIDES];

function toSide(name: string): Side {
  if ((ALL_SIDES as readonly string[]).includes(name)) return name as Side;
  process.stderr.write(`BENCH_SIDES: unknown side "${name}" (sides: ${ALL_SIDES.join(', ')})\n`);
  process.exit(2);
}
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const BROKERS: BrokerKind[] =
  process.env.BENCH_BROKERS === 'none'
    ? []
    : (process.env.BENCH_BROKERS ?? brokerKinds.join(','))
        .split(',')
        .map((s) => s.trim())
        .filter((s): s is BrokerKind => (brokerKinds as readonly string[]).includes(s));
const LABELS: Record<Side, string> = {
  bare: `bare undici POSTs (concurrency ${CONCURRENCY})`,
  floor: 'floor (leased claim, HMAC, POST, one attempt row)',
  tekil: 'tekil dispatcher',
  store: "store-only (tekil's claims and completions, no HTTP)",
};

/** One side's run: deliveries a second, and CPU per delivery (µs) of this process and of Postgres. */
interface Run {
  rate: number;
  nodeUs: number;
  postgresUs: number;
  note: string;
}

function line(side: Side, r: Run): string {
  return `${LABELS[side]}: ${Math.round(r.rate)}/s; CPU per delivery: node ${Math.round(r.nodeUs)} µs, Postgres ${Math.round(r.postgresUs)} µs${r.note}`;
}

async function main(): Promise<void> {
  const name = freshDatabaseName('tekil_dispatch_bench');
  await adminQuery(`CREATE DATABASE ${name}`);
  if (process.env.BENCH_ASYNC_COMMIT) await adminQuery(`ALTER DATABASE ${name} SET synchronous_commit = off`);
  const dbUrl = databaseUrl(name);
  const db = createPostgresDb({ connectionString: dbUrl, max: 8 });
  const floorPool = new pg.Pool({ connectionString: dbUrl, max: 4 });
  // The database is dropped WITH (FORCE) at the end: an idle client cut then must not crash the bench.
  floorPool.on('error', () => {});
  const sink = await startSinkProcess();
  try {
    await migrate(db);
    process.stdout.write(`publishing ${MESSAGES} messages… `);
    const t0 = performance.now();
    const setup = await setUpTekilDispatch(db, { sinkUrl: sink.url, concurrency: CONCURRENCY, messages: MESSAGES });
    const { config, bodies } = setup;
    process.stdout.write(`${Math.round(MESSAGES / ((performance.now() - t0) / 1000))} msg/s (not timed below)\n`);
    await setUpFloor(floorPool);

    const withPostgresCpu = async (run: () => Promise<Omit<Run, 'postgresUs'>>, items: number): Promise<Run> => {
      const pg0 = await backendCpu(db, name);
      const r = await run();
      return { ...r, postgresUs: (cpuBetween(pg0, await backendCpu(db, name)) * 1e6) / items };
    };

    const runBare = async (): Promise<Run> => {
      const r = await bareRate(sink.url, bodies);
      return { rate: r.rate, nodeUs: (r.cpuShare * 1e6) / r.rate, postgresUs: 0, note: '' };
    };

    const runFloor = async (): Promise<Run> => {
      await refillFloor(floorPool, 'SELECT payload FROM outbox_messages ORDER BY id');
      return withPostgresCpu(async () => {
        const r = await floorDispatch(floorPool, sink.url, CONCURRENCY);
        if (r.delivered !== bodies.length) throw new Error(`floor delivered ${r.delivered} of ${bodies.length}`);
        return { rate: r.rate, nodeUs: r.nodeUs, note: '' };
      }, bodies.length);
    };

    let tekilRuns = 0;
    const tekilRunsPlanned = SIDES.includes('tekil') ? ROUNDS : 0;
    const runTekil = async (): Promise<Run> => {
      // BENCH_PROFILE=<file> writes a CPU profile of the last dispatch run (open it in Chrome DevTools).
      const profiler = process.env.BENCH_PROFILE && ++tekilRuns === tekilRunsPlanned ? new Session() : undefined;
      const r = await runTekilDispatch(
        db,
        name,
        setup,
        profiler && {
          async started() {
            profiler.connect();
            await profiler.post('Profiler.enable');
            await profiler.post('Profiler.start');
          },
          async finished() {
            const { profile } = await profiler.post('Profiler.stop');
            writeFileSync(process.env.BENCH_PROFILE!, JSON.stringify(profile));
            profiler.disconnect();
          },
        },
      );
      return { ...r, note: ` (${(r.coreShare * 100).toFixed(0)}% of one core; every delivery succeeded, one attempt each)` };
    };

    const runStore = async (): Promise<Run> => {
      await resetDeliveries(db);
      return withPostgresCpu(async () => {
        const r = await dispatchStoreOnly(db, {
          batchSize: config.sending.dispatcher.batch_size,
          group: FLUSH_GROUP,
          leaseMarginMs: config.sending.dispatcher.lease_margin,
        });
        return {
          rate: r.rate,
          nodeUs: r.nodeUs,
          note: `; ${r.statementsPerItem.toFixed(3)} statements per delivery; wall time per delivery: claim ${r.claimUs.toFixed(1)} µs, completion ${r.completeUs.toFixed(1)} µs`,
        };
      }, MESSAGES);
    };

    const runners: Record<Side, () => Promise<Run>> = { bare: runBare, floor: runFloor, tekil: runTekil, store: runStore };
    // Untimed warm-ups: undici's code (JIT) and its connections, the floor's statements and tables.
    if (SIDES.includes('bare')) await bareRate(sink.url, bodies.slice(0, Math.min(bodies.length, 10_000)));
    if (SIDES.includes('floor')) await runFloor();

    const runs = new Map<Side, Run[]>(SIDES.map((s) => [s, []]));
    for (let round = 0; round < ROUNDS; round++) {
      process.stdout.write(`round ${round + 1} of ${ROUNDS}\n`);
      const order = round % 2 === 0 ? SIDES : [...SIDES].reverse();
      for (const side of order) {
        const r = await runners[side]();
        runs.get(side)!.push(r);
        process.stdout.write(`  ${line(side, r)}\n`);
      }
    }

    process.stdout.write(`median of ${ROUNDS} (the run with the median rate):\n`);
    const med = new Map<Side, Run>();
    for (const side of SIDES) {
      const m = medianBy(runs.get(side)!, (r) => r.rate);
      med.set(side, m);
      process.stdout.write(`  ${line(side, m)}\n`);
    }
    const ratio = (a: Side, b: Side, what: string, target = '') => {
      if (!med.has(a) || !med.has(b)) return;
      const perRound = runs
        .get(a)!
        .map((r, i) => (r.rate / runs.get(b)![i]!.rate).toFixed(2))
        .join(', ');
      process.stdout.write(`${what} = ${(med.get(a)!.rate / med.get(b)!.rate).toFixed(2)}${target} (per round: ${perRound})\n`);
    };
    ratio('tekil', 'bare', 'tekil / bare undici', ' (target >= 0.6)');
    ratio('floor', 'bare', 'floor / bare undici', ' (the most any durable dispatcher reaches here)');
    ratio('tekil', 'floor', 'tekil / floor');
    ratio('tekil', 'store', 'tekil / store-only');

    for (const kind of BROKERS) {
      const own = await brokerClientRate(kind, bodies, CONCURRENCY);
      const ours = await tekilBrokerRun(db, name, setup, kind, sink.url);
      process.stdout.write(
        `${kind}: broker's own client ${Math.round(own.rate)}/s (node ${Math.round(own.nodeUs)} µs per delivery); tekil dispatcher ${Math.round(ours.rate)}/s (node ${Math.round(ours.nodeUs)} µs, Postgres ${Math.round(ours.postgresUs)} µs per delivery); tekil / client = ${(ours.rate / own.rate).toFixed(2)}\n`,
      );
    }
  } finally {
    sink.stop();
    await floorPool.end();
    await db.close();
    await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
}

await main();

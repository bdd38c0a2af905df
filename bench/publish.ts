/**
 * npm run bench:publish — the cost of publishing, two ways:
 *   1. HTTP: `POST /api/v1/messages` on tekil's api role (one endpoint subscribed, so every message fans
 *      out to one delivery) against the bare Fastify ceiling on the same route, driven by wrk;
 *   2. in-process: a transaction that inserts a business row and calls `publish(tx)`, against the same
 *      transaction without it, at 1 and at 32 concurrent callers on a node-postgres pool (the caller's);
 *      and the floor of any transactional outbox: the same transaction plus one bare INSERT of the
 *      message's bytes into a table with only a primary key.
 * Rounds alternate the order of the compared sides; figures are medians of rounds. CPU per item: the
 * server's (HTTP) or this process's (in-process), and the Postgres backends serving the bench database.
 *
 * Knobs (environment): TEKIL_BENCH_DATABASE_URL, BENCH_ROUNDS (default 3), BENCH_SECONDS (HTTP runs,
 * default 10), BENCH_WARMUP (default 2), BENCH_CONNECTIONS (wrk, default 64), BENCH_TX (transactions per
 * in-process run, default 5000), BENCH_PARTS (http,tx; default both), BENCH_NODE_ARGS (extra node flags for
 * the HTTP servers, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"), BENCH_MAX_IN_FLIGHT (tekil's
 * sending.publish.max_in_flight; default: tekil's default), BENCH_EVENT_SCHEMA (0: publish a type the event catalogue
 * does not declare; default: `invoice.paid` is declared with a schema, so each HTTP publish is checked).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { parseConfig } from '../src/config/load.js';
import { DestinationGuard } from '../src/http/destination-guard.js';
import { endpointStore } from '../src/outbox/endpoints.js';
import { createEventType } from '../src/outbox/event-types.js';
import { prepareMessage, publish } from '../src/outbox/publish.js';
import { createSecretBox } from '../src/outbox/secrets.js';
import { createPostgresDb } from '../src/store/postgres.js';
import { migrate } from '../src/store/migrate.js';
import { backendCpu, cpuBetween, medianBy, processCpu } from './lib/cpu.js';
import { adminQuery, databaseUrl, freshDatabaseName } from './lib/database.js';
import { startServer, stopServer } from './lib/http-load.js';
import { requireWrk, runWrk } from './lib/wrk.js';

const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const warmup = Number(process.env.BENCH_WARMUP ?? 2);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 64);
const txCount = Number(process.env.BENCH_TX ?? 5000);
const parts = (process.env.BENCH_PARTS ?? 'http,tx').split(',');
const eventSchema = process.env.BENCH_EVENT_SCHEMA !== '0';
const TOKEN = `bench_${randomBytes(16).toString('hex')}`;
const dbName = freshDatabaseName('tekil_publish_bench');
const dbUrl = databaseUrl(dbName);
const dir = mkdtempSync(join(tmpdir(), 'tekil-publish-bench-'));

interface Figure {
  rate: number;
  /** Mean messages per publishing transaction (tekil's group commit), over warm-up and run. */
  batch?: number;
  p99ms?: number;
  nodeUs: number;
  postgresUs: number;
}
const fmt = (f: Figure) =>
  `${Math.round(f.rate)}/s${f.p99ms === undefined ? '' : `, p99 ${f.p99ms.toFixed(1)} ms`}; CPU per item: node ${f.nodeUs.toFixed(0)} µs, Postgres ${f.postgresUs.toFixed(0)} µs` +
  (f.batch === undefined ? '' : `; ${f.batch.toFixed(1)} messages per transaction`);

/** Mean of tekil's publishing batch histogram from its /metrics (undefined for the ceiling, or before group commit). */
async function meanBatch(port: number): Promise<number | undefined> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`).catch(() => undefined);
  if (!res?.ok) return undefined;
  const text = await res.text();
  const sum = /^tekil_outbox_publish_batch_messages_sum (\S+)$/m.exec(text)?.[1];
  const count = /^tekil_outbox_publish_batch_messages_count (\S+)$/m.exec(text)?.[1];
  return sum && count && Number(count) > 0 ? Number(sum) / Number(count) : undefined;
}

let port = 19_000 + Math.floor(Math.random() * 500);

/** One wrk run of `POST /api/v1/messages` against a server. */
async function httpRun(pool: pg.Pool, args: string[], env: NodeJS.ProcessEnv, round: number): Promise<Figure> {
  port++;
  const child = await startServer(args[0]!, args, { ...env, PORT: String(port) }, /ready/);
  try {
    const script = join(dir, 'publish.lua');
    await runWrk({ port, script, seconds: warmup, connections, offset: round });
    const pg0 = await backendCpu(pool, dbName);
    const node0 = processCpu(child.pid!) ?? 0;
    const r = await runWrk({ port, script, seconds, connections, offset: round });
    if (r.non2xx > 0) {
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
        body: '{"type":"invoice.paid","data":{}}',
      });
      throw new Error(`${args[0]}: ${r.non2xx} answers were not 2xx, e.g. ${res.status} ${await res.text()}`);
    }
    const nodeUs = (((processCpu(child.pid!) ?? 0) - node0) * 1e6) / r.requests;
    const postgresUs = (cpuBetween(pg0, await backendCpu(pool, dbName)) * 1e6) / r.requests;
    const batch = await meanBatch(port);
    return { rate: r.rps, p99ms: r.p99ms, nodeUs, postgresUs, ...(batch === undefined ? {} : { batch }) };
  } finally {
    await stopServer(child);
  }
}

/**
 * What a transaction does besides its business insert: nothing; tekil's `publish(tx)`; or the floor of
 * any transactional outbox, one more INSERT of the same message bytes into a table with only a primary
 * key (no fan-out, no other index, no wake-up).
 */
type TxSide = 'plain' | 'published' | 'floor';

/** `count` transactions by `callers` concurrent callers, each inserting one invoice row, then `side`'s extra. */
async function txRun(pool: pg.Pool, callers: number, side: TxSide, count = txCount): Promise<Figure> {
  let next = 0;
  const tag = randomBytes(4).toString('hex');
  const pg0 = await backendCpu(pool, dbName);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: callers }, async () => {
      const client = await pool.connect();
      try {
        while (next < count) {
          const id = `inv_${tag}_${next++}`;
          await client.query('BEGIN');
          await client.query("INSERT INTO bench_invoices (id, amount, status) VALUES ($1, '125.00', 'paid')", [id]);
          const input = { type: 'invoice.paid', resourceId: id, data: { invoice_id: id, amount: '125.00', currency: 'TRY' } };
          if (side === 'published') await publish(client, input);
          else if (side === 'floor') {
            const message = prepareMessage(input).params;
            await client.query('INSERT INTO bench_outbox_floor (id, payload) VALUES ($1, $2)', [message.id, message.payload]);
          }
          await client.query('COMMIT');
        }
      } finally {
        client.release();
      }
    }),
  );
  const elapsed = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return { rate: count / elapsed, nodeUs: (cpu.user + cpu.system) / count, postgresUs: (cpuBetween(pg0, await backendCpu(pool, dbName)) * 1e6) / count };
}

async function main(): Promise<void> {
  requireWrk();
  await adminQuery(`CREATE DATABASE ${dbName}`);
  const pool = new pg.Pool({ connectionString: dbUrl, max: 34 });
  try {
    const db = createPostgresDb({ connectionString: dbUrl, max: 2 });
    await migrate(db);
    if (eventSchema) {
      // The published type is declared with a schema, so every HTTP publish is checked against it (docs/event-types.md).
      await createEventType(db, {
        name: 'invoice.paid',
        description: 'An invoice was paid.',
        schema: {
          type: 'object',
          required: ['invoice_id', 'amount', 'currency'],
          properties: { invoice_id: { type: 'string' }, amount: { type: 'string', pattern: '^[0-9]+\\.[0-9]{2}$' }, currency: { enum: ['TRY', 'EUR'] } },
        },
        example: { invoice_id: 'inv_1', amount: '125.00', currency: 'TRY' },
        deprecated: false,
        tenant_ids: null,
      });
    }
    const config = parseConfig({ sending: { allow_networks: ['127.0.0.0/8'] } });
    const guard = new DestinationGuard(config.sending.allow_networks);
    const box = createSecretBox(randomBytes(32).toString('base64'));
    await endpointStore({ sending: config.sending, box, guard }).create(db, { url: 'http://127.0.0.1:9/hook' });
    await db.close();
    await pool.query(
      'CREATE TABLE bench_invoices (id text PRIMARY KEY, amount numeric NOT NULL, status text NOT NULL, updated_at timestamptz NOT NULL DEFAULT now())',
    );
    await pool.query('CREATE TABLE bench_outbox_floor (id text PRIMARY KEY, payload bytea NOT NULL)');
    process.stdout.write(`publish benchmark on ${new URL(dbUrl).host}: ${rounds} rounds\n`);

    if (parts.includes('http')) {
      const body = JSON.stringify({ type: 'invoice.paid', resource_id: 'inv_1', data: { invoice_id: 'inv_1', amount: '125.00', currency: 'TRY' } });
      writeFileSync(
        join(dir, 'publish.lua'),
        `wrk.method = "POST"\nwrk.path = "/api/v1/messages"\nwrk.body = ${JSON.stringify(body)}\nwrk.headers["Content-Type"] = "application/json"\nwrk.headers["Authorization"] = "Bearer ${TOKEN}"\n`,
      );
      const maxInFlight = process.env.BENCH_MAX_IN_FLIGHT;
      writeFileSync(join(dir, 'tekil.yaml'), `sources: {}\n${maxInFlight ? `sending: { publish: { max_in_flight: ${Number(maxInFlight)} } }\n` : ''}`);
      const sides = {
        ceiling: { label: 'ceiling (bare Fastify 202)', args: ['bench/ingest/ceiling.ts'], env: {}, runs: [] as Figure[] },
        tekil: {
          label: 'tekil POST /api/v1/messages',
          args: ['bench/ingest/tekil.ts'],
          env: {
            DATABASE_URL: dbUrl,
            TEKIL_ADMIN_TOKEN: TOKEN,
            TEKIL_DATA_DIR: dir,
            TEKIL_LOG_LEVEL: 'warn',
            BENCH_CONFIG: join(dir, 'tekil.yaml'),
            BENCH_ROLES: 'api',
          },
          runs: [] as Figure[],
        },
      };
      for (let round = 0; round < rounds; round++) {
        for (const side of round % 2 === 0 ? [sides.ceiling, sides.tekil] : [sides.tekil, sides.ceiling]) {
          const f = await httpRun(pool, side.args, side.env, round);
          side.runs.push(f);
          process.stdout.write(`  round ${round + 1} ${side.label}: ${fmt(f)}\n`);
        }
      }
      const c = medianBy(sides.ceiling.runs, (f) => f.rate);
      const t = medianBy(sides.tekil.runs, (f) => f.rate);
      process.stdout.write(`median ${sides.ceiling.label}: ${fmt(c)}\nmedian ${sides.tekil.label}: ${fmt(t)}\n`);
      // Each round's pair ran minutes apart at most: their ratio shows how much of the spread is the machine's drift.
      const perRound = sides.tekil.runs.map((f, i) => (f.rate / sides.ceiling.runs[i]!.rate).toFixed(2)).join(', ');
      process.stdout.write(`tekil / HTTP ceiling per round: ${perRound}\n`);
      process.stdout.write(`tekil / HTTP ceiling = ${(t.rate / c.rate).toFixed(2)} (target >= 0.5)\n\n`);
    }

    if (parts.includes('tx')) {
      for (const callers of [1, 32]) {
        const runs: Record<TxSide, Figure[]> = { plain: [], published: [], floor: [] };
        const order: TxSide[] = ['plain', 'published', 'floor'];
        // Untimed: the pool's connections are opened and each side's statements planned on them (the
        // publishing function's plan is kept per connection), so the first timed side pays for neither.
        for (const side of order) await txRun(pool, callers, side, Math.min(txCount, 20 * callers));
        for (let round = 0; round < rounds; round++) {
          for (const side of round % 2 === 0 ? order : [...order].reverse()) runs[side].push(await txRun(pool, callers, side));
        }
        const plain = medianBy(runs.plain, (f) => f.rate);
        const published = medianBy(runs.published, (f) => f.rate);
        const floor = medianBy(runs.floor, (f) => f.rate);
        const pad = ' '.repeat(callers > 1 ? 13 : 12);
        process.stdout.write(`${callers} caller(s): insert + publish(tx): ${fmt(published)}\n${pad}insert only: ${fmt(plain)}\n`);
        process.stdout.write(`${pad}insert + bare INSERT of the message (floor): ${fmt(floor)}\n`);
        const perRound = (side: TxSide) => runs.plain.map((f, i) => (f.rate / runs[side][i]!.rate).toFixed(2)).join(', ');
        process.stdout.write(`  per round, with publish / without: ${perRound('published')}; floor / without: ${perRound('floor')}\n`);
        process.stdout.write(`  time per transaction with publish / without = ${(plain.rate / published.rate).toFixed(2)} (target <= 1.5)\n`);
        process.stdout.write(`  floor: with a bare INSERT of the message / without = ${(plain.rate / floor.rate).toFixed(2)}\n`);
      }
    }
  } finally {
    await pool.end();
    await adminQuery(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();

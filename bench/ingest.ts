/**
 * npm run bench:ingest — receiving throughput on one Postgres, three servers, one payload set:
 *   1. ceiling: bare Fastify answering 200 (what HTTP alone allows on this machine),
 *   2. naive:   verify + one INSERT … ON CONFLICT per request on a pg pool (the hand-written receiver),
 *   3. tekil:   the receiver role, as `tekil start --role receiver` runs it (verify, extract, group commit).
 * Requests are signed up front and replayed by wrk from a Lua script; each server runs in its own
 * process. Env: TEKIL_BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres),
 * BENCH_SECONDS (measured run, default 15), BENCH_WARMUP (default 3), BENCH_CONNECTIONS (64),
 * BENCH_PAYLOADS (signed requests prepared, default 250000), BENCH_SERVERS (comma list of ceiling,naive,tekil;
 * default all), BENCH_MAX_IN_FLIGHT (tekil's receiver.max_in_flight, default 1), BENCH_NODE_ARGS (extra node flags for the servers, e.g. --cpu-prof).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createPostgresDb } from '../src/store/postgres.js';
import { migrate } from '../src/store/migrate.js';
import { adminQuery, databaseUrl, freshDatabaseName } from './lib/database.js';
import { luaScript, preparePayloads, requireWrk, runWrk, startServer, stopServer, type WrkResult } from './lib/http-load.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 15);
const warmup = Number(process.env.BENCH_WARMUP ?? 3);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 64);
const payloadCount = Number(process.env.BENCH_PAYLOADS ?? 250_000);
const SECRET = 'whsec_bench_secret_0123456789';

requireWrk();

const dir = mkdtempSync(join(tmpdir(), 'tekil-bench-'));
const dbName = freshDatabaseName('tekil_ingest_bench');
const dbUrl = databaseUrl(dbName);

async function rowCount(): Promise<number> {
  const c = new pg.Client({ connectionString: dbUrl });
  await c.connect();
  try {
    return (await c.query<{ n: number }>('SELECT count(*)::int AS n FROM inbox_deliveries')).rows[0]!.n;
  } finally {
    await c.end();
  }
}

async function resetTable(): Promise<void> {
  const c = new pg.Client({ connectionString: dbUrl });
  await c.connect();
  try {
    await c.query('TRUNCATE inbox_deliveries'); // the queue with it (a trigger)
    await c.query('CHECKPOINT');
  } finally {
    await c.end();
  }
}

async function tekilBatchStats(port: number): Promise<string> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const sum = Number(/tekil_inbox_batch_rows_sum (\S+)/.exec(text)?.[1] ?? 0);
  const count = Number(/tekil_inbox_batch_rows_count (\S+)/.exec(text)?.[1] ?? 0);
  return count ? `${count} INSERTs, ${(sum / count).toFixed(1)} rows each on average` : 'no batches';
}

interface Row extends WrkResult {
  name: string;
  rows: number | undefined;
  note: string;
}

async function main(): Promise<void> {
  await adminQuery(`CREATE DATABASE ${dbName}`);
  const db = createPostgresDb({ connectionString: dbUrl, max: 1 });
  await migrate(db);
  await db.close();
  try {
    const dataFile = join(dir, 'requests.bin');
    const distinct = preparePayloads(dataFile, { count: payloadCount, secret: SECRET });
    const script = join(dir, 'requests.lua');
    writeFileSync(script, luaScript(dataFile));
    writeFileSync(join(dir, 'tekil.yaml'), `receiver:\n  max_in_flight: ${Number(process.env.BENCH_MAX_IN_FLIGHT ?? 1)}\nsources:\n  bench:\n    scheme: paymos\n    secrets: ["${SECRET}"]\n    tolerance: 3600\n`);
    process.stdout.write(`prepared ${payloadCount} signed requests (${distinct} distinct events, ${payloadCount - distinct} repeats); ${connections} connections, ${warmup}s warm-up + ${seconds}s measured each\n`);

    const allServers: Array<{ key: string; name: string; args: string[]; env: NodeJS.ProcessEnv; ready: RegExp; stores: boolean }> = [
      { key: 'ceiling', name: 'ceiling (bare Fastify 200)', args: ['bench/ingest/ceiling.ts'], env: {}, ready: /ready/, stores: false },
      { key: 'naive', name: 'naive (INSERT per request)', args: ['bench/ingest/naive.ts'], env: { DATABASE_URL: dbUrl, BENCH_SECRET: SECRET }, ready: /ready/, stores: true },
      {
        key: 'tekil',
        name: 'tekil',
        args: ['bench/ingest/tekil.ts'],
        env: { DATABASE_URL: dbUrl, TEKIL_DATA_DIR: dir, TEKIL_LOG_LEVEL: 'warn', BENCH_CONFIG: join(dir, 'tekil.yaml') },
        ready: /ready/,
        stores: true,
      },
    ];
    const wanted = (process.env.BENCH_SERVERS ?? 'ceiling,naive,tekil').split(',');
    const servers = allServers.filter((s) => wanted.includes(s.key));
    const results: Row[] = [];
    let port = 18_400 + Math.floor(Math.random() * 500);
    for (const s of servers) {
      await resetTable();
      port++;
      const child = await startServer(s.name, s.args, { ...s.env, PORT: String(port) }, s.ready);
      try {
        const warm = runWrk(port, script, warmup, 0, connections);
        const measured = runWrk(port, script, seconds, warm.requests, connections);
        const wrapped = warm.requests + measured.requests > payloadCount ? ' (payload set wrapped: raise BENCH_PAYLOADS)' : '';
        const note = (s.name === 'tekil' ? await tekilBatchStats(port) : '') + wrapped + (measured.errors ? ` ${measured.errors}` : '');
        results.push({ name: s.name, ...measured, rows: s.stores ? await rowCount() : undefined, note });
        process.stdout.write(`  ${s.name}: ${measured.rps.toFixed(0)} req/s\n`);
      } finally {
        await stopServer(child);
      }
    }

    const pad = (v: string, n: number) => v.padStart(n);
    process.stdout.write(`\n${'server'.padEnd(28)}${pad('req/s', 10)}${pad('p50 ms', 9)}${pad('p99 ms', 9)}${pad('non-2xx', 9)}${pad('rows', 9)}\n`);
    for (const r of results) {
      process.stdout.write(
        `${r.name.padEnd(28)}${pad(r.rps.toFixed(0), 10)}${pad(r.p50ms.toFixed(2), 9)}${pad(r.p99ms.toFixed(2), 9)}${pad(String(r.non2xx), 9)}${pad(r.rows === undefined ? '-' : String(r.rows), 9)}${r.note ? `  ${r.note}` : ''}\n`,
      );
    }
    const ceiling = results.find((r) => r.name.startsWith('ceiling'));
    const naive = results.find((r) => r.name.startsWith('naive'));
    const tekil = results.find((r) => r.name === 'tekil');
    if (!ceiling || !naive || !tekil) return;
    process.stdout.write(`\ntekil / ceiling = ${(tekil.rps / ceiling.rps).toFixed(2)}   tekil / naive = ${(tekil.rps / naive.rps).toFixed(2)}   naive / ceiling = ${(naive.rps / ceiling.rps).toFixed(2)}\n`);
    const ok = tekil.rps >= 0.5 * ceiling.rps && tekil.p99ms < 25 && tekil.non2xx === 0;
    process.stdout.write(`target (tekil >= 0.5 x ceiling, p99 < 25 ms, no non-2xx): ${ok ? 'met' : 'NOT met'}\n`);
  } finally {
    await adminQuery(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();

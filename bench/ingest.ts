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
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, openSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createScheme } from '../src/signing/index.js';
import { createPostgresDb } from '../src/store/postgres.js';
import { migrate } from '../src/store/migrate.js';
import { adminQuery, databaseUrl, freshDatabaseName } from './lib/database.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 15);
const warmup = Number(process.env.BENCH_WARMUP ?? 3);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 64);
const payloadCount = Number(process.env.BENCH_PAYLOADS ?? 250_000);
const SECRET = 'whsec_bench_secret_0123456789';

if (spawnSync('wrk', ['--version']).error) {
  process.stderr.write('wrk is not installed. Install it with:\n  apt-get update && apt-get install -y wrk\n');
  process.exit(1);
}

const dir = mkdtempSync(join(tmpdir(), 'tekil-bench-'));
const dbName = freshDatabaseName('tekil_ingest_bench');
const dbUrl = databaseUrl(dbName);

/** Signed raw HTTP requests, 10% of them repeats of a recent delivery (as provider retries are). */
function preparePayloads(file: string): number {
  const scheme = createScheme('paymos');
  const fd = openSync(file, 'w');
  const now = Math.floor(Date.now() / 1000);
  let distinct = 0;
  let chunk: string[] = [];
  for (let i = 0; i < payloadCount; i++) {
    const repeat = distinct > 100 && Math.random() < 0.1;
    const n = repeat ? distinct - 1 - Math.floor(Math.random() * Math.min(distinct, 1000)) : distinct++;
    const id = `evt_${n.toString(36).padStart(8, '0')}`;
    const body = JSON.stringify({
      event_id: id,
      event_type: 'invoice.paid',
      version: 1,
      occurred_at: new Date((now - 60) * 1000).toISOString(),
      data: {
        invoice_id: `inv_${(n * 7).toString(36).padStart(8, '0')}`,
        merchant_id: 'mrc_4f7a2c',
        status: 'paid',
        amount: '1250.00',
        paid_amount: '1250.00',
        currency: 'TRY',
        customer: { email: `buyer${n}@example.com` },
        metadata: { order_id: `ord_${n}` },
      },
    });
    const headers = scheme.sign({ body, secrets: [SECRET], id, timestamp: now });
    const head = [`POST /in/bench HTTP/1.1`, 'Host: bench', 'Content-Type: application/json', 'User-Agent: Paymos-Webhooks/1.0',
      ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), `Content-Length: ${Buffer.byteLength(body)}`, '', ''].join('\r\n');
    const raw = head + body;
    chunk.push(`${Buffer.byteLength(raw)}\n${raw}`);
    if (chunk.length === 5000) {
      writeSync(fd, chunk.join(''));
      chunk = [];
    }
  }
  writeSync(fd, chunk.join(''));
  closeSync(fd);
  return distinct;
}

function luaScript(dataFile: string): string {
  return `
local reqs, n, i = {}, 0, 0
function init(args)
  local f = assert(io.open(${JSON.stringify(dataFile)}, "rb"))
  local data = f:read("*a")
  f:close()
  local pos = 1
  while pos <= #data do
    local nl = data:find("\\n", pos, true)
    local len = tonumber(data:sub(pos, nl - 1))
    n = n + 1
    reqs[n] = data:sub(nl + 1, nl + len)
    pos = nl + 1 + len
  end
  i = (tonumber(args[1]) or 0) % n
end
function request()
  i = i + 1
  if i > n then i = 1 end
  return reqs[i]
end
`;
}

interface WrkResult {
  requests: number;
  rps: number;
  p50ms: number;
  p99ms: number;
  non2xx: number;
  errors: string;
}

function toMs(text: string): number {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(text.trim());
  if (!m) return NaN;
  const v = Number(m[1]);
  return m[2] === 'us' ? v / 1000 : m[2] === 'ms' ? v : m[2] === 's' ? v * 1000 : v * 60_000;
}

function runWrk(port: number, script: string, durationSec: number, offset: number): WrkResult {
  const res = spawnSync('wrk', ['-t1', `-c${connections}`, `-d${durationSec}s`, '--latency', '--timeout', '10s', '-s', script, `http://127.0.0.1:${port}/`, '--', String(offset)], {
    encoding: 'utf8',
  });
  const out = res.stdout;
  if (res.status !== 0) throw new Error(`wrk failed: ${res.stderr || out}`);
  const num = (re: RegExp) => Number(re.exec(out)?.[1] ?? 0);
  return {
    requests: num(/(\d+) requests in/),
    rps: num(/Requests\/sec:\s+([\d.]+)/),
    p50ms: toMs(/\n\s+50%\s+(\S+)/.exec(out)?.[1] ?? ''),
    p99ms: toMs(/\n\s+99%\s+(\S+)/.exec(out)?.[1] ?? ''),
    non2xx: num(/Non-2xx or 3xx responses:\s+(\d+)/),
    errors: /Socket errors:[^\n]*/.exec(out)?.[0] ?? '',
  };
}

function startServer(name: string, args: string[], env: NodeJS.ProcessEnv, readyPattern: RegExp): Promise<ChildProcess> {
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (readyPattern.test(out)) resolve(child);
    });
    child.on('exit', (code) => reject(new Error(`${name} exited (${code}) before it was ready:\n${err}`)));
  });
}

async function stopServer(child: ChildProcess): Promise<void> {
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  child.kill('SIGTERM');
  await exited;
}

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
    const distinct = preparePayloads(dataFile);
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
        const warm = runWrk(port, script, warmup, 0);
        const measured = runWrk(port, script, seconds, warm.requests);
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

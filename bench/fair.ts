/**
 * Fair sending (docs/performance.md, "Fair sending"): a quiet tenant's webhooks while another tenant
 * misbehaves, each case against the quiet tenant with nobody misbehaving ("alone"):
 *   alone: the quiet tenant publishes a message every 100 ms to its endpoint, while a well-behaved
 *          tenant's backlog (BENCH_HEALTHY messages to 4 fast endpoints) keeps the dispatcher busy;
 *   (a)    plus a tenant with 50 endpoints that answer in BENCH_SLOW_MS (8 s) and BENCH_SLOW_MESSAGES
 *          (2,000) messages to them;
 *   (b)    plus a tenant with BENCH_BURST (100,000) messages to one fast endpoint of its own;
 *   (c)    (a) and (b) at once (one noisy tenant), with two dispatcher processes.
 * Each case runs its dispatchers as `tekil start --role dispatcher` processes (default settings) over a
 * fresh Postgres database for BENCH_WINDOW seconds (15); the receivers run in this process. Printed per
 * case: the quiet tenant's latency, publish answered → received (p50 / p99 / max), deliveries a second
 * to endpoints that answer fast (all tenants') against alone, the noisy tenant's fast endpoint's rate,
 * the most requests in flight at the receivers, and the dispatcher processes' RSS. Goals (issue 40):
 * quiet p99 ≤ 2 × alone and ≤ 250 ms; fast deliveries ≥ 0.9 × alone.
 *
 *   npm run bench:fair                 (Postgres: TEKIL_BENCH_DATABASE_URL, else TEKIL_TEST_DATABASE_URL,
 *                                       else postgres://postgres@127.0.0.1:5432/postgres)
 *   BENCH_BURST=20000 BENCH_WINDOW=10 npm run bench:fair
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { newEndpointId } from '../src/outbox/ids.js';
import { publish } from '../src/outbox/publish.js';
import { createSecretBox, generateEndpointSecret } from '../src/outbox/secrets.js';
import { migrate } from '../src/store/migrate.js';
import { createPostgresDb } from '../src/store/postgres.js';
import { adminQuery, databaseUrl, freshDatabaseName } from './lib/database.js';

const SLOW_MS = Number(process.env.BENCH_SLOW_MS ?? 8_000);
const SLOW_MESSAGES = Number(process.env.BENCH_SLOW_MESSAGES ?? 2_000);
const BURST = Number(process.env.BENCH_BURST ?? 100_000);
const HEALTHY = Number(process.env.BENCH_HEALTHY ?? 10_000);
const WINDOW_S = Number(process.env.BENCH_WINDOW ?? 15);
const SECRET_KEY = 'bench secret key';
const root = fileURLToPath(new URL('../', import.meta.url));

type Db = ReturnType<typeof createPostgresDb>;

/** The receivers: paths under /slow answer after SLOW_MS, the others at once; counts what is open. */
function startReceivers() {
  let open = 0;
  let mostOpen = 0;
  const fastArrivals = { n: 0 };
  const noisyFast = { n: 0 };
  const quiet = new Map<number, number>();
  const server = createServer((req, res) => {
    const path = req.url ?? '/';
    open++;
    mostOpen = Math.max(mostOpen, open);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = Date.now();
      if (path === '/quiet') {
        const seq = (JSON.parse(Buffer.concat(chunks).toString()) as { data: { seq: number } }).data.seq;
        if (!quiet.has(seq)) quiet.set(seq, at);
      }
      if (!path.startsWith('/slow')) fastArrivals.n++;
      if (path === '/noisy-fast') noisyFast.n++;
      const answer = () => {
        open--;
        res.writeHead(200).end('ok');
      };
      if (path.startsWith('/slow')) setTimeout(answer, SLOW_MS);
      else answer();
    });
  });
  server.keepAliveTimeout = 60_000;
  server.headersTimeout = 0;
  server.requestTimeout = 0;
  return {
    listen: () => new Promise<string>((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`))),
    reset() {
      mostOpen = open;
      fastArrivals.n = 0;
      noisyFast.n = 0;
      quiet.clear();
    },
    get mostOpen() {
      return mostOpen;
    },
    fastArrivals,
    noisyFast,
    quiet,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function startDispatcher(dir: string, url: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'start', '-c', join(dir, 'tekil.yaml'), '-p', '0', '--role', 'dispatcher'], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: url, TEKIL_DATA_DIR: dir, TEKIL_SECRET_KEY: SECRET_KEY, TEKIL_LOG_LEVEL: 'error' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  return new Promise((resolve, reject) => {
    const onData = (d: Buffer) => {
      out += d.toString();
      if (/tekil listening on/.test(out)) resolve(child);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`dispatcher exited (${code}):\n${out}`)));
  });
}

function rssMb(pid: number | undefined): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
}

async function publishAll(db: Db, tenantId: string, type: string, count: number): Promise<void> {
  const chunk = 500;
  const starts = Array.from({ length: Math.ceil(count / chunk) }, (_, i) => i * chunk);
  const next = () => starts.shift();
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let s = next(); s !== undefined; s = next()) {
        const start = s;
        await db.transaction(async (tx) => {
          for (let i = start; i < Math.min(count, start + chunk); i++) await publish(tx, { tenantId, type, data: { i } });
        });
      }
    }),
  );
}

interface CaseResult {
  name: string;
  p50: number;
  p99: number;
  max: number;
  lost: number;
  fastRate: number;
  noisyFastRate: number;
  mostOpen: number;
  rssMb: number[];
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN;

async function main(): Promise<void> {
  const receivers = startReceivers();
  const base = await receivers.listen();
  const name = freshDatabaseName('tekil_fair_bench');
  await adminQuery(`CREATE DATABASE ${name}`);
  const url = databaseUrl(name);
  const db = createPostgresDb({ connectionString: url, max: 8 });
  const dir = mkdtempSync(join(tmpdir(), 'tekil-fair-'));
  writeFileSync(join(dir, 'tekil.yaml'), 'sending:\n  allow_networks: ["127.0.0.0/8"]\n  timeout: 20s\n');
  const results: CaseResult[] = [];
  try {
    await migrate(db);
    const box = createSecretBox(SECRET_KEY);
    const endpoints: Array<[string, string, string, string]> = [['quiet', `${base}/quiet`, 'q.x', newEndpointId()]];
    for (let i = 0; i < 4; i++) endpoints.push(['healthy', `${base}/healthy/${i}`, 'h.x', newEndpointId()]);
    for (let i = 0; i < 50; i++) endpoints.push(['noisy', `${base}/slow/${i}`, 'slow.x', newEndpointId()]);
    endpoints.push(['noisy', `${base}/noisy-fast`, 'burst.x', newEndpointId()]);
    await db.query("INSERT INTO tenants (id, name) VALUES ('quiet', 'quiet'), ('healthy', 'healthy'), ('noisy', 'noisy')");
    for (const [tenant, u, type, id] of endpoints) {
      await db.query('INSERT INTO endpoints (id, tenant_id, url, event_types, timeout_ms, max_in_flight) VALUES ($1, $2, $3, ARRAY[$4], 20000, 16)', [
        id,
        tenant,
        u,
        type,
      ]);
      await db.query('INSERT INTO endpoint_secrets (endpoint_id, secret_enc) VALUES ($1, $2)', [id, box.encrypt(generateEndpointSecret())]);
    }

    const runCase = async (label: string, slow: boolean, burst: boolean, processes: number): Promise<CaseResult> => {
      await db.query('TRUNCATE outbox_attempts, outbox_queue, outbox_deliveries, outbox_messages, outbox_tenant_done');
      await db.query('UPDATE tenants SET requests_claimed = 0');
      await db.query('UPDATE endpoints SET slow_p90_ms = NULL, failed_attempts_in_row = 0, consecutive_failures = 0, probe_at = NULL');
      await publishAll(db, 'healthy', 'h.x', HEALTHY);
      if (slow) await publishAll(db, 'noisy', 'slow.x', SLOW_MESSAGES);
      if (burst) await publishAll(db, 'noisy', 'burst.x', BURST);
      const dispatchers = await Promise.all(Array.from({ length: processes }, () => startDispatcher(dir, url)));
      // The noisy tenant settles in (its slow endpoints' requests are open) before the window.
      await new Promise((r) => setTimeout(r, slow ? 3_000 : 1_000));
      receivers.reset();
      const published = new Map<number, number>();
      const started = Date.now();
      let seq = 0;
      let rss = dispatchers.map(() => 0);
      while (Date.now() - started < WINDOW_S * 1000) {
        const n = seq++;
        await db.transaction((tx) => publish(tx, { tenantId: 'quiet', type: 'q.x', data: { seq: n } }));
        published.set(n, Date.now());
        rss = dispatchers.map((d, i) => Math.max(rss[i]!, rssMb(d.pid)));
        await new Promise((r) => setTimeout(r, 100));
      }
      const elapsed = (Date.now() - started) / 1000;
      const fast = receivers.fastArrivals.n;
      const noisyFast = receivers.noisyFast.n;
      const mostOpen = receivers.mostOpen;
      // The last quiet messages get a few seconds to arrive; what never does counts as lost.
      const deadline = Date.now() + 10_000;
      while (receivers.quiet.size < published.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      const latencies = [...published].flatMap(([n, at]) => (receivers.quiet.has(n) ? [receivers.quiet.get(n)! - at] : [])).sort((a, b) => a - b);
      for (const d of dispatchers) d.kill('SIGKILL');
      await Promise.all(dispatchers.map((d) => new Promise((r) => (d.exitCode !== null ? r(null) : d.once('exit', r)))));
      const r: CaseResult = {
        name: label,
        p50: quantile(latencies, 0.5),
        p99: quantile(latencies, 0.99),
        max: latencies.at(-1) ?? NaN,
        lost: published.size - latencies.length,
        fastRate: fast / elapsed,
        noisyFastRate: noisyFast / elapsed,
        mostOpen,
        rssMb: rss,
      };
      console.log(
        `${label.padEnd(44)} quiet p50 ${r.p50} ms, p99 ${r.p99} ms, max ${r.max} ms${r.lost ? `, ${r.lost} never arrived` : ''}; ` +
          `fast deliveries ${r.fastRate.toFixed(0)}/s; noisy fast endpoint ${r.noisyFastRate.toFixed(0)}/s; ` +
          `most requests open ${r.mostOpen}; RSS ${r.rssMb.map((m) => `${m.toFixed(0)} MB`).join(' + ')}`,
      );
      return r;
    };

    console.log(`bench:fair — slow endpoints answer in ${SLOW_MS} ms; window ${WINDOW_S} s; burst ${BURST}; healthy backlog ${HEALTHY} messages x 4 endpoints`);
    const alone = await runCase('alone', false, false, 1);
    results.push(alone);
    results.push(await runCase('(a) 50 endpoints answering in 8 s', true, false, 1));
    results.push(await runCase(`(b) ${BURST} messages to one fast endpoint`, false, true, 1));
    results.push(await runCase('(c) both, two dispatcher processes', true, true, 2));
    console.log('');
    for (const r of results.slice(1)) {
      const verdict = (ok: boolean) => (ok ? 'PASS' : 'FAIL');
      const relativeOk = r.p99 <= 2 * alone.p99 && r.lost === 0;
      const fastOk = r.fastRate >= 0.9 * alone.fastRate;
      console.log(
        `${r.name.padEnd(44)} quiet p99 ${r.p99} ms vs alone ${alone.p99} ms (x${(r.p99 / alone.p99).toFixed(2)}): ` +
          `<= 2x alone ${verdict(relativeOk)}, <= 250 ms ${verdict(r.p99 <= 250)}; ` +
          `fast deliveries x${(r.fastRate / alone.fastRate).toFixed(2)} of alone: ${verdict(fastOk)}`,
      );
    }
    const slowCase = results[1]!;
    if (slowCase.mostOpen > 0) {
      console.log(
        `memory: (a) held ${slowCase.mostOpen} requests open at ${slowCase.rssMb[0]!.toFixed(0)} MB RSS against ${alone.rssMb[0]!.toFixed(0)} MB alone ` +
          `(~${(((slowCase.rssMb[0]! - alone.rssMb[0]!) * 1024) / Math.max(1, slowCase.mostOpen - alone.mostOpen)).toFixed(0)} KB per open request)`,
      );
    }
  } finally {
    await db.close();
    await receivers.close();
    rmSync(dir, { recursive: true, force: true });
    await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
}

await main();

// npm run bench:fair-streams — another client's webhooks while one tenant's event streams run.
//
// A tenant with 30,000 deliveries (tables never analyzed, as a Postgres with autovacuum off leaves them)
// and 200 `GET /api/v1/events` streams opened with its viewer token. Meanwhile another client posts
// signed webhooks one after another (as a provider does) to the same tekil, on loopback, and its
// answers' latency is measured: alone, then with the 200 streams under the default caps (most are
// refused with 429 TOO_MANY_STREAMS), then with the caps raised so that all 200 are open (what the shared
// poll and the one-page read cost). Prints p50 / p99 per case, the ratio to alone, the 503s, and
// PASS/FAIL against p99 ≤ 2 × alone with no 503. Each case runs a few seconds; the database is fresh and
// dropped afterwards.
//
//   TEKIL_BENCH_DATABASE_URL  server to use (default postgres://postgres@127.0.0.1:5432/postgres)
//   BENCH_DELIVERIES          the streaming tenant's deliveries (default 30000)
//   BENCH_STREAMS             streams opened (default 200)
//   BENCH_SECONDS             seconds of webhooks per case (default 8)
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { request } from 'undici';
import { pino } from 'pino';
import { buildApp } from '../src/app.js';
import { parseConfig, type ConfigInput } from '../src/config/index.js';
import { createMetricsRegistry } from '../src/metrics.js';
import { resolveSettings } from '../src/settings.js';
import { createScheme } from '../src/signing/index.js';
import { migrate } from '../src/store/migrate.js';
import { createPostgresDb } from '../src/store/postgres.js';
import { withFreshDatabase } from './lib/database.js';

const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 30_000);
const STREAMS = Number(process.env.BENCH_STREAMS ?? 200);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const ADMIN = 'bench-fair-streams';
const SECRET = 'whsec_bench_fair_streams';

type Db = ReturnType<typeof createPostgresDb>;

async function load(db: Db): Promise<void> {
  await db.query(`INSERT INTO tenants (id, name) VALUES ('m_streams', 'Streaming merchant')`);
  await db.query(
    `INSERT INTO endpoints (id, tenant_id, url, timeout_ms, max_in_flight, enabled) VALUES ('ep_streams', 'm_streams', 'http://127.0.0.1:9/', 5000, 4, false)`,
  );
  await db.query(
    `INSERT INTO outbox_messages (id, tenant_id, event_type, resource_id, payload)
     SELECT 'evt_' || lpad(i::text, 12, '0'), 'm_streams', 'invoice.paid', 'inv_' || i, convert_to('{"amount":1000}', 'UTF8') FROM generate_series(1, $1::int) i`,
    [DELIVERIES],
  );
  await db.query(
    `INSERT INTO outbox_deliveries (tenant_id, message_id, endpoint_id, status, attempts, last_status_code, last_attempt_at, completed_at)
     SELECT 'm_streams', 'evt_' || lpad(i::text, 12, '0'), 'ep_streams', 'succeeded', 1, 200, now(), now() FROM generate_series(1, $1::int) i`,
    [DELIVERIES],
  );
  await db.query(
    `INSERT INTO outbox_attempts (tenant_id, delivery_id, message_id, endpoint_id, attempt, url, started_at, duration_ms, succeeded, status_code)
     SELECT tenant_id, id, message_id, endpoint_id, 1, 'http://127.0.0.1:9/', now(), 20, true, 200 FROM outbox_deliveries`,
  );
}

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

interface CaseResult {
  name: string;
  p50: number;
  p99: number;
  sent: number;
  unavailable: number;
  opened: number;
  refused: number;
}

async function runCase(db: Db, name: string, streams: number, tenants: ConfigInput['tenants']): Promise<CaseResult> {
  const config = parseConfig({ sources: { bench: { scheme: 'paymos', secrets: [SECRET], tolerance: 300 } }, ...(tenants ? { tenants } : {}) });
  const ctx = { config, settings: resolveSettings(config, {}), db, logger: pino({ level: 'silent' }), metrics: createMetricsRegistry(false) };
  const app = await buildApp({ ctx, roles: new Set(['receiver', 'api']), adminToken: ADMIN });
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  const open: Array<() => void> = [];
  let opened = 0;
  let refused = 0;
  try {
    if (streams > 0) {
      const made = await app.inject({
        method: 'POST',
        url: '/api/v1/tenants/m_streams/tokens',
        headers: { authorization: `Bearer ${ADMIN}` },
        payload: { role: 'viewer', name: `bench ${name}` },
      });
      const token = (made.json() as { token: string }).token;
      for (let i = 0; i < streams; i++) {
        const res = await request(`${base}/api/v1/events`, { headers: { authorization: `Bearer ${token}` } });
        if (res.statusCode === 200) {
          opened++;
          // Read and drop what the stream sends, as a browser tab would.
          res.body.on('data', () => {}).on('error', () => {});
          open.push(() => res.body.destroy());
        } else {
          refused++;
          await res.body.text();
        }
      }
      // Let every stream's first look happen before measuring.
      await new Promise((r) => setTimeout(r, 2_500));
    }
    const scheme = createScheme('paymos');
    const times: number[] = [];
    let unavailable = 0;
    const until = performance.now() + SECONDS * 1000;
    for (let i = 0; performance.now() < until; i++) {
      const id = `evt_${name.replace(/\W/g, '')}_${i}`;
      const body = JSON.stringify({ event_id: id, event_type: 'invoice.paid', version: 1, data: { invoice_id: `inv_${i}`, amount: '10.00' } });
      const headers = { 'content-type': 'application/json', ...scheme.sign({ body, secrets: [SECRET], id }) };
      const t0 = performance.now();
      const res = await request(`${base}/in/bench`, { method: 'POST', body, headers });
      await res.body.text();
      times.push(performance.now() - t0);
      if (res.statusCode === 503) unavailable++;
      else if (res.statusCode !== 200) throw new Error(`webhook answered ${res.statusCode}`);
    }
    times.sort((a, b) => a - b);
    return { name, p50: percentile(times, 50), p99: percentile(times, 99), sent: times.length, unavailable, opened, refused };
  } finally {
    for (const close of open) close();
    await app.close();
  }
}

await withFreshDatabase('tekil_bench_fair_streams', async (url) => {
  const db = createPostgresDb({ connectionString: url, max: 10 });
  try {
    await migrate(db);
    await load(db);
    const autovacuum = (await db.query<{ a: string }>("SELECT current_setting('autovacuum') AS a")).rows[0]!.a;
    console.log(
      `tenant m_streams: ${DELIVERIES} deliveries, tables not analyzed (server autovacuum: ${autovacuum}); ${STREAMS} streams; ${SECONDS} s of webhooks per case`,
    );
    console.log(`machine load (1 min) before: ${loadavg()[0]!.toFixed(1)}`);
    const raised = { quotas: { streams: STREAMS }, streams: { per_session: STREAMS, per_address: STREAMS } };
    const alone = await runCase(db, 'alone', 0, undefined);
    const capped = await runCase(db, `${STREAMS} streams, default caps`, STREAMS, undefined);
    const all = await runCase(db, `${STREAMS} streams, all open`, STREAMS, raised);
    console.log(
      `\n${'case'.padEnd(30)} ${'p50'.padStart(9)} ${'p99'.padStart(9)} ${'p99/alone'.padStart(10)} ${'sent'.padStart(6)} ${'503'.padStart(5)}  streams open / refused`,
    );
    let pass = true;
    for (const r of [alone, capped, all]) {
      const ratio = r.p99 / alone.p99;
      if (r !== alone && (ratio > 2 || r.unavailable > 0)) pass = false;
      console.log(
        `${r.name.padEnd(30)} ${r.p50.toFixed(1).padStart(6)} ms ${r.p99.toFixed(1).padStart(6)} ms ${ratio.toFixed(2).padStart(9)}× ${String(r.sent).padStart(6)} ${String(r.unavailable).padStart(5)}  ${r.opened} / ${r.refused}`,
      );
    }
    console.log(`machine load (1 min) after: ${loadavg()[0]!.toFixed(1)}`);
    console.log(`\n${pass ? 'PASS' : 'FAIL'}: another client's webhook p99 with ${STREAMS} streams of one tenant ≤ 2 × alone, no 503`);
    if (!pass) process.exitCode = 1;
  } finally {
    await db.close();
  }
});

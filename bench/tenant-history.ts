// npm run bench:tenant-history — one tenant's history at a provider's scale: 10M deliveries over
// 20,000 tenants (2 endpoints each, so 5M messages fanning out to 2 deliveries), then the tenant-scoped
// lists the merchant portal and `GET /api/v1/deliveries?tenant_id=` / `GET /api/v1/messages?tenant_id=`
// answer, each asked of many random tenants through the real API (buildApp, Fastify inject: routing,
// auth, validation, the statements, serialisation). Prints p50 and p99 per list and PASS/FAIL against
// 50 ms at p99. Loading the rows is done in SQL (generate_series), not timed, and not through publish.
// Each run gets a fresh database, dropped afterwards.
//
//   TEKIL_BENCH_DATABASE_URL  server to use (default postgres://postgres@127.0.0.1:5432/postgres)
//   BENCH_DELIVERIES          deliveries (default 10000000; two per message)
//   BENCH_TENANTS             tenants (default 20000)
//   BENCH_SAMPLES             random tenants asked per list (default 300)
//   BENCH_EXPLAIN=1           print the plans of the tenant lists (EXPLAIN ANALYZE)
//   BENCH_KEEP=1              keep the filled database (its name is printed) instead of dropping it
//   BENCH_DATABASE=<name>     measure on a database kept by an earlier run (no migration, no loading)
//   BENCH_BEFORE=0            skip timing the all-tenant delivery statement with a tenant filter (the
//                             plan before migration 021) on a few tenants, for comparison
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { pino } from 'pino';
import { buildApp } from '../src/app.js';
import { parseConfig } from '../src/config/index.js';
import { createMetricsRegistry } from '../src/metrics.js';
import { resolveSettings } from '../src/settings.js';
import { migrate } from '../src/store/migrate.js';
import { createPostgresDb } from '../src/store/postgres.js';
import { listDeliveriesStatement, listMessagesStatement } from '../src/store/sql/outbox/history.js';
import { listTenantDeliveriesStatement } from '../src/store/sql/outbox/tenant-history.js';
import { adminQuery, databaseUrl, freshDatabaseName } from './lib/database.js';

const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 10_000_000);
const TENANTS = Number(process.env.BENCH_TENANTS ?? 20_000);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 300);
const MESSAGES = Math.ceil(DELIVERIES / 2);
const TARGET_MS = 50;
const CHUNK = 500_000;
const TYPES = ['invoice.paid', 'invoice.created', 'invoice.paid', 'payment.failed', 'refund.created'];

type Db = ReturnType<typeof createPostgresDb>;

/**
 * Message i belongs to tenant (i · 7919) mod TENANTS, so every tenant's messages are spread over the
 * whole history (a tenant's newest page is not the table's newest rows). Ids sort by time as tekil's do.
 * Deliveries: 90% succeeded, 4% failed, 3% pending, 3% cancelled; one attempt each for the ones tried.
 */
async function load(db: Db): Promise<void> {
  const started = performance.now();
  await db.exec(`SET synchronous_commit = off`);
  await db.query(`INSERT INTO tenants (id, name) SELECT 'm_' || t, 'Merchant ' || t FROM generate_series(0, $1::int - 1) AS t`, [TENANTS]);
  await db.query(
    `INSERT INTO endpoints (id, tenant_id, url, timeout_ms, max_in_flight, enabled)
     SELECT 'ep_' || t || '_' || j, 'm_' || t, 'http://127.0.0.1:9/m' || t || '/' || j, 5000, 4, false
     FROM generate_series(0, $1::int - 1) AS t CROSS JOIN generate_series(0, 1) AS j`,
    [TENANTS],
  );
  for (let lo = 1; lo <= MESSAGES; lo += CHUNK) {
    const hi = Math.min(lo + CHUNK - 1, MESSAGES);
    await db.query(
      `INSERT INTO outbox_messages (id, tenant_id, event_type, resource_id, payload, created_at)
       SELECT 'evt_' || lpad(i::text, 12, '0'), 'm_' || ((i::int8 * 7919) % $3), ($4::text[])[1 + (i * 13) % 5], 'inv_' || (i % 1000003),
              convert_to('{"id":"evt_' || i || '","amount":1000}', 'UTF8'), now() - (($5::int - i) * interval '50 milliseconds')
       FROM generate_series($1::int, $2::int) AS i`,
      [lo, hi, TENANTS, TYPES, MESSAGES],
    );
    await db.query(
      `INSERT INTO outbox_deliveries (tenant_id, message_id, endpoint_id, status, attempts, next_attempt_at, last_status_code, last_error,
                                      last_attempt_at, created_at, completed_at)
       SELECT 'm_' || ((i::int8 * 7919) % $3), 'evt_' || lpad(i::text, 12, '0'), 'ep_' || ((i::int8 * 7919) % $3) || '_' || j, s.status,
              CASE s.status WHEN 'pending' THEN 0 WHEN 'cancelled' THEN 0 WHEN 'failed' THEN 3 ELSE 1 END,
              CASE s.status WHEN 'pending' THEN now() + interval '1 day' ELSE c.at END,
              CASE s.status WHEN 'succeeded' THEN 200 WHEN 'failed' THEN 503 END,
              CASE s.status WHEN 'failed' THEN 'HTTP 503' END,
              CASE WHEN s.status IN ('succeeded', 'failed') THEN c.at + interval '80 milliseconds' END,
              c.at, CASE WHEN s.status <> 'pending' THEN c.at + interval '80 milliseconds' END
       FROM generate_series($1::int, $2::int) AS i CROSS JOIN generate_series(0, 1) AS j
       CROSS JOIN LATERAL (SELECT now() - (($4::int - i) * interval '50 milliseconds') AS at) c
       CROSS JOIN LATERAL (SELECT CASE WHEN h < 90 THEN 'succeeded' WHEN h < 94 THEN 'failed' WHEN h < 97 THEN 'pending' ELSE 'cancelled' END AS status
                           FROM (SELECT ((i::int8 * 2 + j) * 2654435761) % 100 AS h) x) s
       ORDER BY i, j`,
      [lo, hi, TENANTS, MESSAGES],
    );
    const from = `'evt_' || lpad(${lo}::text, 12, '0')`;
    const to = `'evt_' || lpad(${hi}::text, 12, '0')`;
    await db.exec(
      `INSERT INTO outbox_attempts (tenant_id, delivery_id, message_id, endpoint_id, attempt, url, started_at, duration_ms, succeeded, status_code, error)
       SELECT d.tenant_id, d.id, d.message_id, d.endpoint_id, d.attempts, 'http://127.0.0.1:9/hook', d.last_attempt_at - interval '80 milliseconds',
              20 + d.id % 400, d.status = 'succeeded', d.last_status_code, d.last_error
       FROM outbox_deliveries d WHERE d.message_id BETWEEN ${from} AND ${to} AND d.status IN ('succeeded', 'failed');
       INSERT INTO outbox_queue (tenant_id, delivery_id, endpoint_id, next_attempt_at, failed)
       SELECT d.tenant_id, d.id, d.endpoint_id, d.next_attempt_at, d.status = 'failed'
       FROM outbox_deliveries d WHERE d.message_id BETWEEN ${from} AND ${to} AND d.status IN ('pending', 'failed')`,
    );
    process.stdout.write(`\rloaded ${Math.min(hi * 2, DELIVERIES)} / ${DELIVERIES} deliveries (${Math.round((performance.now() - started) / 1000)} s)`);
  }
  await db.exec('VACUUM ANALYZE');
  console.log(`\nloaded ${MESSAGES} messages, ${MESSAGES * 2} deliveries over ${TENANTS} tenants in ${Math.round((performance.now() - started) / 1000)} s`);
}

/** A list's parameters with no filter, one page of 50 (and one row more, as the API asks). */
const noFilter = {
  before_id: null,
  endpoint_id: null,
  tenant_id: null,
  status: null,
  event_type: null,
  resource_id: null,
  since: null,
  until: null,
  message_id: null,
  limit: 51,
};

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
const randomTenant = () => `m_${Math.floor(Math.random() * TENANTS)}`;

const kept = process.env.BENCH_DATABASE;
const dbName = kept ?? freshDatabaseName('tekil_bench_tenant_history');
if (!kept) await adminQuery(`CREATE DATABASE ${dbName}`);
try {
  const db = createPostgresDb({ connectionString: databaseUrl(dbName), max: 4 });
  try {
    if (!kept) {
      await migrate(db);
      await load(db);
    }

    const config = parseConfig({}, {});
    const ctx = { config, settings: resolveSettings(config, {}), db, logger: pino({ level: 'silent' }), metrics: createMetricsRegistry(false) };
    const app = await buildApp({ ctx, roles: new Set(['api']), adminToken: 'bench' });
    await app.ready();
    const get = async (path: string): Promise<{ items: unknown[]; next_cursor: string | null }> => {
      const res = await app.inject({ method: 'GET', url: `/api/v1${path}`, headers: { authorization: 'Bearer bench' } });
      if (res.statusCode !== 200) throw new Error(`GET ${path}: ${res.statusCode} ${res.body}`);
      return res.json();
    };

    // Each list: a path for a tenant, and whether it needs the first page's cursor (a later page).
    const lists: Array<{ what: string; path: (tenant: string) => string; later?: boolean }> = [
      { what: 'deliveries, first page', path: (t) => `/deliveries?tenant_id=${t}&limit=50` },
      { what: 'deliveries, a later page (cursor)', path: (t) => `/deliveries?tenant_id=${t}&limit=50`, later: true },
      { what: 'deliveries, status=succeeded', path: (t) => `/deliveries?tenant_id=${t}&status=succeeded&limit=50` },
      { what: 'deliveries, status=failed', path: (t) => `/deliveries?tenant_id=${t}&status=failed&limit=50` },
      { what: 'deliveries, status=pending', path: (t) => `/deliveries?tenant_id=${t}&status=pending&limit=50` },
      { what: 'deliveries, type=refund.created', path: (t) => `/deliveries?tenant_id=${t}&type=refund.created&limit=50` },
      { what: 'deliveries, type + status=failed', path: (t) => `/deliveries?tenant_id=${t}&type=invoice.paid&status=failed&limit=50` },
      { what: 'messages, first page', path: (t) => `/messages?tenant_id=${t}&limit=50` },
      { what: 'messages, a later page (cursor)', path: (t) => `/messages?tenant_id=${t}&limit=50`, later: true },
      { what: 'messages, type=refund.created', path: (t) => `/messages?tenant_id=${t}&type=refund.created&limit=50` },
      { what: 'messages, status=failed', path: (t) => `/messages?tenant_id=${t}&status=failed&limit=50` },
    ];

    // Warm the route and the statements (not the data: each sample asks a random tenant).
    for (const list of lists) await get(list.path(randomTenant()));
    let worst = 0;
    const load1 = () => loadavg()[0]!.toFixed(1);
    console.log(`machine load (1 min) before measuring: ${load1()}`);
    console.log(`\n${'tenant-scoped list (limit 50)'.padEnd(36)} ${'p50'.padStart(8)} ${'p99'.padStart(8)}   (${SAMPLES} random tenants each)`);
    for (const list of lists) {
      const times: number[] = [];
      let rows = 0;
      for (let i = 0; i < SAMPLES; i++) {
        const tenant = randomTenant();
        let path = list.path(tenant);
        if (list.later) {
          const first = await get(path);
          if (first.next_cursor) path += `&cursor=${encodeURIComponent(first.next_cursor)}`;
        }
        const t0 = performance.now();
        const page = await get(path);
        times.push(performance.now() - t0);
        rows += page.items.length;
      }
      times.sort((a, b) => a - b);
      const p99 = percentile(times, 99);
      worst = Math.max(worst, p99);
      console.log(
        `${list.what.padEnd(36)} ${percentile(times, 50).toFixed(1).padStart(5)} ms ${p99.toFixed(1).padStart(5)} ms   ${(rows / SAMPLES).toFixed(0)} rows a page`,
      );
    }

    // The same first pages as statements alone (no HTTP layer, no JSON): what the store spends.
    const storeOnly: Array<[string, (tenant: string) => Promise<unknown>]> = [
      ['deliveries, first page', (tenant) => listTenantDeliveriesStatement.run(db, { ...noFilter, tenant_id: tenant })],
      ['messages, first page', (tenant) => listMessagesStatement.run(db, { ...noFilter, tenant_id: tenant })],
    ];
    for (const [what, run] of storeOnly) {
      const times: number[] = [];
      for (let i = 0; i < SAMPLES; i++) {
        const t0 = performance.now();
        await run(randomTenant());
        times.push(performance.now() - t0);
      }
      times.sort((a, b) => a - b);
      console.log(`${`store only: ${what}`.padEnd(36)} ${percentile(times, 50).toFixed(1).padStart(5)} ms ${percentile(times, 99).toFixed(1).padStart(5)} ms`);
    }
    console.log(`machine load (1 min) after measuring: ${load1()}`);

    if (process.env.BENCH_EXPLAIN === '1') {
      const tenant = randomTenant();
      const deliveryValues = { ...noFilter, tenant_id: tenant, status: 'failed' };
      const plans = {
        [`tenant deliveries, first page (${tenant})`]: {
          sql: listTenantDeliveriesStatement.text,
          params: listTenantDeliveriesStatement.bind({ ...deliveryValues, status: null }),
        },
        [`tenant deliveries, status=failed (${tenant})`]: {
          sql: listTenantDeliveriesStatement.text,
          params: listTenantDeliveriesStatement.bind(deliveryValues),
        },
        [`tenant messages, type=refund.created (${tenant})`]: {
          sql: listMessagesStatement.text,
          params: listMessagesStatement.bind({ ...deliveryValues, status: null, event_type: 'refund.created' }),
        },
      };
      for (const [what, { sql, params }] of Object.entries(plans)) {
        const { rows } = await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, COSTS OFF, SUMMARY OFF) ${sql}`, params);
        console.log(`-- ${what}\n${rows.map((r) => r['QUERY PLAN']).join('\n')}`);
      }
    }

    if (process.env.BENCH_BEFORE !== '0') {
      // The all-tenant statement with the tenant as a filter (what the list ran before): it reads the
      // whole history newest first until the tenant's page is full. A few tenants only: it is slow.
      const times: number[] = [];
      for (let i = 0; i < 3; i++) {
        const t0 = performance.now();
        await listDeliveriesStatement.run(db, { ...noFilter, tenant_id: randomTenant() });
        times.push(performance.now() - t0);
      }
      console.log(`${'before: all-tenant statement + filter'.padEnd(36)} ${times.map((t) => `${Math.round(t)} ms`).join(', ')} (3 tenants, first page)`);
    }

    await app.close();
    console.log(
      `\n${worst < TARGET_MS ? 'PASS' : 'FAIL'}: worst p99 ${worst.toFixed(1)} ms against ${TARGET_MS} ms, ${MESSAGES * 2} deliveries over ${TENANTS} tenants`,
    );
    if (worst >= TARGET_MS) process.exitCode = 1;
  } finally {
    await db.close();
  }
} finally {
  if (kept) console.log(`measured on the kept database ${dbName}`);
  else if (process.env.BENCH_KEEP === '1') console.log(`kept the database ${dbName}: BENCH_DATABASE=${dbName} measures it again`);
  else await adminQuery(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
}

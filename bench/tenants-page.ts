// npm run bench:tenants-page — the dashboard's Tenants page over a big store: GET /stats/tenants's reads
// (a page of tenants, then health for that page only) timed over 20,000 tenants with 2 endpoints each
// and N outbound deliveries spread over them (1% failed, 0.5% waiting, last attempted over 24 h), on
// Postgres. Compared in the same run against the plain tenant list (GET /tenants, the floor) and the
// overview's store-wide endpoint health (GET /stats/outbox). Inserting the rows is not timed.
//
//   TEKIL_BENCH_DATABASE_URL  server to use (default postgres://postgres@127.0.0.1:5432/postgres)
//   BENCH_N                   deliveries (default 2000000)
//   BENCH_TENANTS             tenants (default 20000)
import { performance } from 'node:perf_hooks';
import { endpointHealth } from '../src/dashboard/stats.js';
import { tenantHealthPage, type FailingRules } from '../src/tenants/health.js';
import { listTenantPage } from '../src/tenants/tenants.js';
import { migrate } from '../src/store/migrate.js';
import { createPostgresDb } from '../src/store/postgres.js';
import { withFreshDatabase } from './lib/database.js';

const N = Number(process.env.BENCH_N ?? 2_000_000);
const TENANTS = Number(process.env.BENCH_TENANTS ?? 20_000);
const HOUR = 3_600_000;
const rules: FailingRules = { endpointFailing: { failures: 5, success_below: 50, min_attempts: 20 }, breakerFailures: 20 };

/** Median of five runs after one warm-up, in ms. */
async function time(fn: () => Promise<unknown>): Promise<number> {
  await fn();
  const runs: number[] = [];
  for (let i = 0; i < 5; i++) {
    const start = performance.now();
    await fn();
    runs.push(performance.now() - start);
  }
  return Math.round(runs.sort((a, b) => a - b)[2]! * 10) / 10;
}

await withFreshDatabase('tekil_bench_tenants_page', async (url) => {
  const db = await createPostgresDb({ connectionString: url });
  try {
    await migrate(db);
    const started = performance.now();
    await db.query(`INSERT INTO tenants (id, name) SELECT 'm_' || lpad(i::text, 6, '0'), 'Merchant ' || i FROM generate_series(1, $1::int) i`, [TENANTS]);
    // Two endpoints a tenant; one in fifty has its breaker open.
    await db.query(
      `INSERT INTO endpoints (id, tenant_id, url, timeout_ms, max_in_flight, failed_attempts_in_row)
       SELECT 'ep_' || i, 'm_' || lpad((1 + i % $1::int)::text, 6, '0'), 'https://merchant.example/' || i, 5000, 4, CASE WHEN i % 50 = 0 THEN 30 ELSE 0 END
       FROM generate_series(0, 2 * $1::int - 1) i`,
      [TENANTS],
    );
    await db.query(
      `INSERT INTO outbox_deliveries (tenant_id, message_id, endpoint_id, status, attempts, last_attempt_at, created_at)
       SELECT e.tenant_id, 'msg_' || i, e.id,
              CASE WHEN i % 100 = 0 THEN 'failed' WHEN i % 200 = 1 THEN 'pending' ELSE 'succeeded' END, 1,
              now() - ((i % 86400) * interval '1 second'), now() - ((i % 86400) * interval '1 second')
       FROM generate_series(1, $1::int) i JOIN endpoints e ON e.id = 'ep_' || (i % (2 * $2::int))`,
      [N, TENANTS],
    );
    await db.query(
      `INSERT INTO outbox_queue (tenant_id, delivery_id, endpoint_id, failed) SELECT tenant_id, id, endpoint_id, status = 'failed' FROM outbox_deliveries WHERE status <> 'succeeded'`,
    );
    await db.query(
      `INSERT INTO outbox_attempts (tenant_id, delivery_id, message_id, endpoint_id, attempt, url, started_at, duration_ms, succeeded)
       SELECT tenant_id, id, message_id, endpoint_id, 1, 'https://merchant.example/', last_attempt_at, 40, status = 'succeeded' FROM outbox_deliveries`,
    );
    await db.query('ANALYZE');
    console.log(
      `${TENANTS} tenants, ${2 * TENANTS} endpoints, ${N} deliveries and attempts inserted in ${Math.round((performance.now() - started) / 1000)} s (not timed below)`,
    );

    const middle = `m_${String(Math.floor(TENANTS / 2)).padStart(6, '0')}`;
    const rows: Array<[string, () => Promise<unknown>]> = [
      ['baseline: GET /tenants, 100 tenants', () => listTenantPage(db, undefined, 100)],
      ['baseline: GET /stats/outbox, 1 h', () => endpointHealth(db, HOUR)],
      ['baseline: GET /stats/outbox, 24 h', () => endpointHealth(db, 24 * HOUR)],
      ['stats/tenants: first 50, 1 h', () => tenantHealthPage(db, { limit: 50, windowMs: HOUR }, rules)],
      ['stats/tenants: 100 from the middle, 1 h', () => tenantHealthPage(db, { limit: 100, after: middle, windowMs: HOUR }, rules)],
      ['stats/tenants: 100 from the middle, 24 h', () => tenantHealthPage(db, { limit: 100, after: middle, windowMs: 24 * HOUR }, rules)],
      ['stats/tenants: search "erchant 1999"', () => tenantHealthPage(db, { q: 'erchant 1999', limit: 50, windowMs: HOUR }, rules)],
      ['stats/tenants: search matching none', () => tenantHealthPage(db, { q: 'nobody', limit: 50, windowMs: HOUR }, rules)],
    ];
    for (const [what, fn] of rows) console.log(`${what.padEnd(44)} ${await time(fn)} ms`);
  } finally {
    await db.close();
  }
});

/**
 * npm run bench:tenants-publish — what one publish costs Postgres with one tenant and with 20,000, in
 * figures that do not move with the machine's load: the CPU of the one backend that runs the publishing
 * function, and its shared buffer hits, per message. bench:tenants measures throughput end to end; this
 * one says where a gap between its two sides comes from.
 *
 * Two databases, set up alike but for their tenants (as bench:tenants): one tenant of two endpoints, and
 * BENCH_TENANTS tenants (default 20,000) of two endpoints each. A run empties the outbox tables and, on a
 * new connection (so every run starts with no cached plans), publishes BENCH_MESSAGES messages (default
 * 20,000; message i belongs to tenant i mod N, fanning out to its two endpoints) in one statement that
 * calls the publishing function once per message, under EXPLAIN (ANALYZE, BUFFERS, TIMING OFF).
 *
 * Two functions, in the same run: tekil_outbox_publish as it is now, and the baseline, migration 016's
 * (its tenant check went through an array, which Postgres planned anew on every call once there were
 * many tenants; migration 024). Rounds alternate the order; figures are medians of rounds.
 *
 *   npm run bench:tenants-publish    (Postgres: as bench:tenants; the backend must run on this machine)
 *
 * Knobs (environment): BENCH_TENANTS (default 20000), BENCH_MESSAGES (default 20000), BENCH_ROUNDS (default 3).
 */
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { newEndpointId } from '../src/outbox/ids.js';
import { migrate } from '../src/store/migrate.js';
import { createPostgresDb } from '../src/store/postgres.js';
import { processCpu } from './lib/cpu.js';
import { adminQuery, databaseUrl, freshDatabaseName } from './lib/database.js';

const TENANTS = Number(process.env.BENCH_TENANTS ?? 20_000);
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 20_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ENDPOINTS_PER_TENANT = 2;

type Side = 'single' | 'tenants';
type Variant = 'current' | 'baseline';
const FUNCTIONS: Record<Variant, string> = { current: 'tekil_outbox_publish', baseline: 'tekil_outbox_publish_016' };

interface Database {
  side: Side;
  name: string;
  tenantCount: number;
}

interface Run {
  postgresUs: number;
  bufferHits: number;
}

/**
 * Migration 016's publishing function, under another name, as the baseline: its tenant check as it was,
 * writing the columns and keys of today's tables (migration 025: each delivery and queue row carries the
 * tenant, and an idempotency key is the tenant's), so the two differ only in how they check.
 */
function baselineFunction(): string {
  const migration = readFileSync(new URL('../src/store/migrations/016_tenants.sql', import.meta.url), 'utf8');
  const start = migration.indexOf('CREATE FUNCTION tekil_outbox_publish(');
  const end = migration.indexOf('END $fn$;', start) + 'END $fn$;'.length;
  if (start < 0 || end < start) throw new Error('migration 016 has no tekil_outbox_publish');
  const replacements: Array<[string, string]> = [
    ['CREATE FUNCTION tekil_outbox_publish(', `CREATE FUNCTION ${FUNCTIONS.baseline}(`],
    ['ON CONFLICT (idempotency_key)', 'ON CONFLICT (tenant_id, idempotency_key)'],
    [
      'INSERT INTO outbox_deliveries (message_id, endpoint_id, url)\n    SELECT msg.id,',
      'INSERT INTO outbox_deliveries (tenant_id, message_id, endpoint_id, url)\n    SELECT p_tenant_id, msg.id,',
    ],
    ['SELECT msg.id, x.endpoint_id, x.url FROM msg', 'SELECT p_tenant_id, msg.id, x.endpoint_id, x.url FROM msg'],
    [
      'INSERT INTO outbox_queue (delivery_id, endpoint_id) SELECT f.id,',
      'INSERT INTO outbox_queue (tenant_id, delivery_id, endpoint_id) SELECT p_tenant_id, f.id,',
    ],
  ];
  let text = migration.slice(start, end);
  for (const [from, to] of replacements) {
    if (!text.includes(from)) throw new Error(`migration 016's tekil_outbox_publish no longer holds: ${from}`);
    text = text.replace(from, to);
  }
  return text;
}

async function setUpDatabase(side: Side, tenantCount: number): Promise<Database> {
  const name = freshDatabaseName(`tekil_tenants_publish_bench_${side}`);
  await adminQuery(`CREATE DATABASE ${name}`);
  const db = createPostgresDb({ connectionString: databaseUrl(name), max: 2 });
  try {
    await migrate(db);
    const tenants = Array.from({ length: tenantCount }, (_, i) => `m_${String(i + 1).padStart(6, '0')}`);
    const endpointIds = tenants.flatMap(() => Array.from({ length: ENDPOINTS_PER_TENANT }, () => newEndpointId()));
    const endpointTenants = tenants.flatMap((t) => Array<string>(ENDPOINTS_PER_TENANT).fill(t));
    await db.query('INSERT INTO tenants (id, name) SELECT t, t FROM unnest($1::text[]) AS t', [tenants]);
    await db.query(
      `INSERT INTO endpoints (id, tenant_id, url, timeout_ms, max_in_flight)
       SELECT id, tenant_id, 'http://127.0.0.1:9/', 10000, 384 FROM unnest($1::text[], $2::text[]) AS x (id, tenant_id)`,
      [endpointIds, endpointTenants],
    );
    await db.exec(baselineFunction());
    await db.exec('VACUUM ANALYZE tenants, endpoints');
  } finally {
    await db.close();
  }
  return { side, name, tenantCount };
}

async function publishRun(d: Database, variant: Variant, round: number): Promise<Run> {
  const client = new pg.Client({ connectionString: databaseUrl(d.name) });
  await client.connect();
  try {
    await client.query('TRUNCATE outbox_attempts, outbox_queue, outbox_deliveries, outbox_messages');
    await client.query('VACUUM ANALYZE outbox_messages, outbox_deliveries, outbox_queue');
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    const pid = rows[0]!.pid;
    const cpu0 = processCpu(pid);
    const explained = await client.query<{ 'QUERY PLAN': Array<{ Plan: { 'Shared Hit Blocks': number; 'Actual Rows': number } }> }>(
      `EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON)
       SELECT count(*) FROM generate_series(0, $1::int - 1) g,
         LATERAL ${FUNCTIONS[variant]}('m_' || lpad(((g % $2::int) + 1)::text, 6, '0'), 'evt_' || $3::text || '_' || g, 'invoice.paid', 'inv_' || g,
                  convert_to('{"type":"invoice.paid","data":{"invoice_id":"inv_' || g || '","amount":"125.00","currency":"TRY"}}', 'UTF8'),
                  NULL, '{}'::text[], '{}'::text[]) p`,
      [MESSAGES, d.tenantCount, `${variant}_${round}`],
    );
    const cpu1 = processCpu(pid);
    if (cpu0 === undefined || cpu1 === undefined) throw new Error('the Postgres backend is not on this machine: its CPU cannot be read');
    const queued = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox_queue');
    if (queued.rows[0]!.n !== MESSAGES * ENDPOINTS_PER_TENANT) throw new Error(`${d.side}: ${queued.rows[0]!.n} deliveries queued`);
    const plan = explained.rows[0]!['QUERY PLAN'][0]!.Plan;
    return { postgresUs: ((cpu1 - cpu0) * 1e6) / MESSAGES, bufferHits: plan['Shared Hit Blocks'] / MESSAGES };
  } finally {
    await client.end();
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
const label = (d: Side) => (d === 'single' ? '1 tenant' : `${TENANTS} tenants`);

async function main(): Promise<void> {
  const databases: Database[] = [];
  try {
    process.stdout.write(`setting up: 1 tenant and ${TENANTS} tenants, ${ENDPOINTS_PER_TENANT} endpoints each; ${MESSAGES} messages a run\n`);
    databases.push(await setUpDatabase('single', 1));
    databases.push(await setUpDatabase('tenants', TENANTS));
    const runs = new Map<string, Run[]>();
    const key = (v: Variant, s: Side) => `${v}/${s}`;
    for (let round = 0; round < ROUNDS; round++) {
      process.stdout.write(`round ${round + 1} of ${ROUNDS}\n`);
      const variants: Variant[] = round % 2 === 0 ? ['baseline', 'current'] : ['current', 'baseline'];
      for (const variant of variants) {
        for (const d of round % 2 === 0 ? databases : [...databases].reverse()) {
          const r = await publishRun(d, variant, round);
          runs.set(key(variant, d.side), [...(runs.get(key(variant, d.side)) ?? []), r]);
          process.stdout.write(
            `  ${variant} (${FUNCTIONS[variant]}), ${label(d.side)}: Postgres CPU ${Math.round(r.postgresUs)} µs a message, ${r.bufferHits.toFixed(1)} buffer hits\n`,
          );
        }
      }
    }
    process.stdout.write(`median of ${ROUNDS}:\n`);
    for (const variant of ['baseline', 'current'] as const) {
      const cpu = (s: Side) => median(runs.get(key(variant, s))!.map((r) => r.postgresUs));
      const hits = (s: Side) => median(runs.get(key(variant, s))!.map((r) => r.bufferHits));
      process.stdout.write(
        `  ${variant}: Postgres CPU a message ${Math.round(cpu('single'))} µs (1 tenant), ${Math.round(cpu('tenants'))} µs (${TENANTS} tenants): ` +
          `${cpu('tenants') >= cpu('single') ? '+' : ''}${Math.round(cpu('tenants') - cpu('single'))} µs, tenants/single = ${(cpu('tenants') / cpu('single')).toFixed(2)}; ` +
          `buffer hits ${hits('single').toFixed(1)} and ${hits('tenants').toFixed(1)}\n`,
      );
    }
  } finally {
    for (const d of databases) await adminQuery(`DROP DATABASE IF EXISTS ${d.name} WITH (FORCE)`);
  }
}

await main();

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listTenantDeliveriesStatement, listTenantMessagesStatement } from '../src/store/sql/outbox/tenant-history.js';
import type { Queryable } from '../src/store/db.js';
import { createTestDb, type TestDb } from './helpers/db.js';

/**
 * A tenant's history page reads one page of rows whatever the statistics (docs/tenants.md): on tables
 * never analyzed (a Postgres with autovacuum off, PGlite) and on analyzed ones, for a page of 51 and of
 * 201 (what each event stream polls), and for a later page. Tenant m_a's 3,000 deliveries sit behind
 * 6,000 newer ones of m_b. Counted here: the rows each plan takes from outbox_deliveries or
 * outbox_messages (found and dropped by a filter), for the whole statement and for the page function's
 * own statement planned both ways Postgres plans it (custom and generic), with the function's settings.
 */
interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

const A_ROWS = 3_000;
const B_ROWS = 6_000;

/** Rows a plan read from a table: each scan's rows, kept or dropped, times its loops. */
function rowsRead(node: PlanNode, table: string): number {
  let n = 0;
  if (node['Relation Name'] === table) {
    n += ((node['Actual Rows'] ?? 0) + (node['Rows Removed by Filter'] ?? 0) + (node['Rows Removed by Index Recheck'] ?? 0)) * (node['Actual Loops'] ?? 1);
  }
  for (const child of node.Plans ?? []) n += rowsRead(child, table);
  return n;
}

async function explain(q: Queryable, sql: string, params: unknown[] = []): Promise<PlanNode> {
  const { rows } = await q.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> | string }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, params);
  const plan = rows[0]!['QUERY PLAN'];
  return (typeof plan === 'string' ? JSON.parse(plan) : plan)[0].Plan;
}

describe("a tenant's history page reads one page whatever the statistics", () => {
  let t: TestDb;
  let newestA: string;

  beforeAll(async () => {
    t = await createTestDb();
    const db = t.db;
    await db.query(`INSERT INTO tenants (id, name) VALUES ('m_a', 'a'), ('m_b', 'b')`);
    await db.query(
      `INSERT INTO endpoints (id, tenant_id, url, timeout_ms, max_in_flight, enabled)
       VALUES ('ep_a', 'm_a', 'http://127.0.0.1:9/a', 5000, 4, false), ('ep_b', 'm_b', 'http://127.0.0.1:9/b', 5000, 4, false)`,
    );
    // m_a first, then m_b's newer rows: m_a's newest page sits behind all of m_b's.
    for (const [tenant, endpoint, from, count] of [
      ['m_a', 'ep_a', 0, A_ROWS],
      ['m_b', 'ep_b', A_ROWS, B_ROWS],
    ] as const) {
      await db.query(
        `INSERT INTO outbox_messages (id, tenant_id, event_type, resource_id, payload)
         SELECT 'evt_' || lpad((i + $3)::text, 12, '0'), $1, 'invoice.paid', 'inv_' || i, convert_to('{}', 'UTF8') FROM generate_series(1, $2::int) i`,
        [tenant, count, from],
      );
      await db.query(
        `INSERT INTO outbox_deliveries (tenant_id, message_id, endpoint_id, status, attempts)
         SELECT $1, 'evt_' || lpad((i + $3)::text, 12, '0'), $4, 'succeeded', 1 FROM generate_series(1, $2::int) i`,
        [tenant, count, from, endpoint],
      );
    }
    await db.query(
      `INSERT INTO outbox_attempts (tenant_id, delivery_id, message_id, endpoint_id, attempt, url, started_at, duration_ms, succeeded)
       SELECT tenant_id, id, message_id, endpoint_id, 1, 'u', now(), 5, true FROM outbox_deliveries`,
    );
    newestA = `evt_${String(A_ROWS).padStart(12, '0')}`;
  }, 120_000);
  afterAll(async () => {
    await t?.close();
  });

  const filters = { before_id: null, endpoint_id: null, status: null, event_type: null, resource_id: null, since: null, until: null, message_id: null };

  /** The page function's own statement, planned with the function's settings, custom and generic: rows it read. */
  async function functionReads(name: string, args: unknown[], table: string): Promise<number[]> {
    const fn = (
      await t.db.query<{ src: string; config: string[] | null; types: string }>(
        `SELECT prosrc AS src, proconfig AS config, oidvectortypes(proargtypes) AS types FROM pg_proc WHERE proname = $1`,
        [name],
      )
    ).rows[0]!;
    expect(fn.config).toContain('enable_sort=off');
    const reads: number[] = [];
    for (const mode of ['force_custom_plan', 'force_generic_plan']) {
      reads.push(
        await t.db.transaction(async (tx) => {
          for (const setting of fn.config ?? []) {
            const [key, value] = setting.split('=');
            await tx.query(`SELECT set_config($1, $2, true)`, [key, value]);
          }
          await tx.query(`SET LOCAL plan_cache_mode = ${mode}`);
          await tx.query(`PREPARE page_check (${fn.types}) AS ${fn.src}`);
          const literals: string[] = [];
          for (const value of args) literals.push((await tx.query<{ q: string }>('SELECT quote_nullable($1::text) AS q', [value])).rows[0]!.q);
          const plan = await explain(tx, `EXECUTE page_check(${literals.join(', ')})`);
          await tx.query('DEALLOCATE page_check');
          return rowsRead(plan, table);
        }),
      );
    }
    return reads;
  }

  async function check(statistics: string): Promise<void> {
    for (const limit of [51, 201]) {
      // The whole statement, as the portal, the API and a stream's poll send it.
      const values = { ...filters, tenant_id: 'm_a', limit };
      const plan = await explain(t.db, listTenantDeliveriesStatement.text, listTenantDeliveriesStatement.bind(values));
      expect(rowsRead(plan, 'outbox_deliveries'), `${statistics}: deliveries, limit ${limit}`).toBeLessThanOrEqual(limit + 2);
      const { rows } = await listTenantDeliveriesStatement.run(t.db, values);
      expect(rows).toHaveLength(limit);
      expect(rows[0]!.message_id).toBe(newestA);
      // The page's own walk, custom and generic: one page, not the tenant's history nor m_b's newer rows.
      const walk = await functionReads('tekil_outbox_tenant_delivery_page', ['m_a', null, null, null, null, null, null, null, limit], 'outbox_deliveries');
      for (const n of walk) expect(n, `${statistics}: the delivery page's walk, limit ${limit}`).toBeLessThanOrEqual(limit + 1);
      // A later page starts at its cursor.
      const cursor = rows[rows.length - 1]!.id;
      const later = await functionReads('tekil_outbox_tenant_delivery_page', ['m_a', cursor, null, null, null, null, null, null, limit], 'outbox_deliveries');
      for (const n of later) expect(n, `${statistics}: a later page, limit ${limit}`).toBeLessThanOrEqual(limit + 1);

      const messages = await explain(t.db, listTenantMessagesStatement.text, listTenantMessagesStatement.bind(values));
      expect(rowsRead(messages, 'outbox_messages'), `${statistics}: messages, limit ${limit}`).toBeLessThanOrEqual(limit + 2);
      const messageWalk = await functionReads('tekil_outbox_tenant_message_page', ['m_a', null, null, null, null, null, null, null, limit], 'outbox_messages');
      for (const n of messageWalk) expect(n, `${statistics}: the message page's walk, limit ${limit}`).toBeLessThanOrEqual(limit + 1);
      expect((await listTenantMessagesStatement.run(t.db, values)).rows[0]!.id).toBe(newestA);
    }
  }

  it('on tables never analyzed', async () => {
    const { rows } = await t.db.query<{ n: string }>(
      `SELECT count(*) AS n FROM pg_stat_user_tables WHERE relname IN ('outbox_deliveries', 'outbox_messages') AND (last_analyze IS NOT NULL OR last_autoanalyze IS NOT NULL)`,
    );
    expect(Number(rows[0]!.n)).toBe(0);
    await check('never analyzed');
  }, 60_000);

  it('on analyzed tables, the tenant behind newer rows of another', async () => {
    await t.db.query('ANALYZE outbox_deliveries, outbox_messages, outbox_attempts, endpoints');
    await check('analyzed');
  }, 60_000);

  it("an endpoint filter reads the endpoint's key, one page", async () => {
    const values = { ...filters, tenant_id: 'm_a', endpoint_id: 'ep_a', limit: 51 };
    const plan = await explain(t.db, listTenantDeliveriesStatement.text, listTenantDeliveriesStatement.bind(values));
    expect(rowsRead(plan, 'outbox_deliveries')).toBeLessThanOrEqual(2 * 51 + 2);
    const { rows } = await listTenantDeliveriesStatement.run(t.db, values);
    expect(rows).toHaveLength(51);
    expect(rows[0]!.message_id).toBe(newestA);
    const walk = await functionReads('tekil_outbox_tenant_delivery_page', ['m_a', null, 'ep_a', null, null, null, null, null, 51], 'outbox_deliveries');
    for (const n of walk) expect(n, "the endpoint page's walk").toBeLessThanOrEqual(52);
  });

  it("a message filter still reads the message's deliveries through the fan-out key", async () => {
    const values = { ...filters, tenant_id: 'm_a', message_id: newestA, limit: 51 };
    const plan = await explain(t.db, listTenantDeliveriesStatement.text, listTenantDeliveriesStatement.bind(values));
    expect(rowsRead(plan, 'outbox_deliveries')).toBeLessThanOrEqual(4);
    expect((await listTenantDeliveriesStatement.run(t.db, values)).rows.map((r) => r.message_id)).toEqual([newestA]);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publish } from '../src/outbox/publish.js';
import { claimStatement } from '../src/store/sql/outbox/claim-deliveries.js';
import { createTestDb, onPostgres, type TestDb } from './helpers/db.js';
import { outboxHarness } from './helpers/outbox.js';

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  Plans?: PlanNode[];
}

const QUEUE_TABLES = new Set(['outbox_queue', 'outbox_deliveries', 'outbox_messages', 'endpoints', 'tenants', 'outbox_tenant_done']);

function seqScans(node: PlanNode, out: string[] = []): string[] {
  if (node['Node Type'] === 'Seq Scan' && node['Relation Name'] && QUEUE_TABLES.has(node['Relation Name'])) out.push(node['Relation Name']);
  for (const child of node.Plans ?? []) seqScans(child, out);
  return out;
}

/**
 * The dispatcher's claim keeps its speed whatever the statistics say (issue: a claim prepared while the
 * queue was empty, on tables never analyzed, as a Postgres with autovacuum off leaves them, kept a plan
 * that read the queue whole). Its plan is index probes whatever the statistics: checked here on a fresh
 * database whose tables were never analyzed, the statement prepared and run while the queue was empty,
 * then asked again with 20,000 due rows, generic plan and custom plan alike.
 */
describe.skipIf(!onPostgres)('the claim on never-analyzed tables', () => {
  let t: TestDb;

  beforeAll(async () => {
    t = await createTestDb();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('plans no sequential scan of the queue tables, prepared while the queue was empty and run over 20,000 due rows', async () => {
    const h = outboxHarness(t.db);
    for (let i = 0; i < 10; i++) await h.endpoints.create(t.db, { url: `http://127.0.0.1:9/${i}` });
    const analyzed = await t.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_user_tables WHERE relname IN ('outbox_queue', 'outbox_deliveries') AND (last_analyze IS NOT NULL OR last_autoanalyze IS NOT NULL)",
    );
    expect(analyzed.rows[0]!.n).toBe(0);
    const values = {
      limit: 200,
      lease: 'plan',
      lease_margin_ms: 60_000,
      breaker_failures: 20,
      pace_margin_ms: 50,
      after_tenant: '',
      cursor_tenants: [] as string[],
      cursor_after: [] as string[],
      quantum: 200,
      tenant_cap: 1000,
      slow_free: 100,
    };
    await t.db.transaction(async (tx) => {
      await tx.query(`PREPARE claim_check AS ${claimStatement.text}`);
      const literals: string[] = [];
      for (const value of claimStatement.bind(values)) {
        literals.push((await tx.query<{ q: string }>('SELECT quote_nullable($1::text) AS q', [value])).rows[0]!.q);
      }
      const execute = `EXECUTE claim_check(${literals.join(', ')})`;
      // Run while the queue is empty, as a dispatcher does at start: Postgres settles on its plan.
      for (let i = 0; i < 8; i++) await tx.query(execute);
      for (let done = 0; done < 2_000; done += 500) {
        for (let m = done; m < done + 500; m++) await publish(tx, { type: 'plan.check', data: { m } });
      }
      const due = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox_queue');
      expect(due.rows[0]!.n).toBe(20_000);
      for (const mode of ['auto', 'force_generic_plan', 'force_custom_plan']) {
        await tx.query(`SET LOCAL plan_cache_mode = ${mode}`);
        const { rows } = await tx.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`EXPLAIN (FORMAT JSON) ${execute}`);
        expect({ mode, seqScans: seqScans(rows[0]!['QUERY PLAN'][0]!.Plan) }).toEqual({ mode, seqScans: [] });
      }
      await tx.query('SET LOCAL plan_cache_mode = auto');
      // Ten endpoints of 16 requests in flight each.
      const claimed = await tx.query(execute);
      expect(claimed.rows).toHaveLength(160);
      await tx.query('DEALLOCATE claim_check');
    });
  }, 180_000);
});

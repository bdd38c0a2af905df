import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimStatement } from '../src/store/sql/inbox/claim-due-deliveries.js';
import { createTestDb, onPostgres, type TestDb } from './helpers/db.js';

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  Alias?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

function scans(node: PlanNode, out: PlanNode[] = []): PlanNode[] {
  if (node['Relation Name']) out.push(node);
  for (const child of node.Plans ?? []) scans(child, out);
  return out;
}

/** Every index a node or its children read (a bitmap heap scan's index is its child's). */
function indexesOf(node: PlanNode, out: string[] = []): string[] {
  if (node['Index Name']) out.push(node['Index Name']);
  for (const child of node.Plans ?? []) indexesOf(child, out);
  return out;
}

const describeScan = (n: PlanNode) => `${n['Node Type']} on ${n['Relation Name']} ${n.Alias ?? ''}${n['Index Name'] ? ` using ${n['Index Name']}` : ''}`;

/**
 * The worker's claim keeps its speed whatever the statistics say. This machine's Postgres, like many CI
 * images, runs with autovacuum off: the queue is never analyzed, and the planner sizes it by its pages
 * (at least ten). A plan made while the queue is empty must not be one that reads the whole queue once
 * 100,000 rows have arrived. Asserted on plan shapes, not on times.
 */
describe.skipIf(!onPostgres)('the worker claim on tables never analyzed', () => {
  let t: TestDb;
  let client: pg.Client;
  const stmt = claimStatement(500);
  const values = stmt.bind({ lease_ms: 60_000, token: 'plan', lost_error: 'lost', after: '', capped: ['b'], caps: [4] });
  const literal = (v: unknown) => (Array.isArray(v) ? `'{${v.join(',')}}'` : typeof v === 'number' ? String(v) : `'${String(v)}'`);

  /** The generic plan Postgres would keep for a prepared claim: what it plans without the values. */
  async function genericPlan(): Promise<PlanNode> {
    await client.query('SET plan_cache_mode = force_generic_plan');
    await client.query(`PREPARE claim_plan AS ${stmt.text}`);
    try {
      const res = await client.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
        `EXPLAIN (FORMAT JSON) EXECUTE claim_plan(${values.map(literal).join(', ')})`,
      );
      return res.rows[0]!['QUERY PLAN'][0]!.Plan;
    } finally {
      await client.query('DEALLOCATE claim_plan');
      await client.query('RESET plan_cache_mode');
    }
  }

  /** The plan the claim runs with: it is sent unnamed, planned with its values on every run. */
  async function runPlan(): Promise<PlanNode> {
    await client.query('BEGIN');
    try {
      const res = await client.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`EXPLAIN (FORMAT JSON) ${stmt.text}`, values);
      return res.rows[0]!['QUERY PLAN'][0]!.Plan;
    } finally {
      await client.query('ROLLBACK');
    }
  }

  /** The scans that choose rows (the walk over sources, each source's due rows, the resource rule) are index scans. */
  function expectChoosingScansIndexed(plan: PlanNode): void {
    // `q` is the UPDATE's own target, found again by the claimed rows' ctids; the others choose rows.
    const choosing = scans(plan).filter((n) => n['Relation Name'] === 'inbox_queue' && n.Alias !== 'q');
    expect(choosing.length).toBeGreaterThanOrEqual(3);
    for (const n of choosing) {
      expect(['Index Scan', 'Index Only Scan', 'Bitmap Heap Scan'], describeScan(n)).toContain(n['Node Type']);
    }
    for (const n of choosing) expect(indexesOf(n), describeScan(n)).not.toEqual([]);
    expect(indexesOf(plan)).toContain('inbox_queue_source_due');
    // The resource rule probes the resource's index, never the source's backlog per candidate.
    const rule = scans(plan).filter((n) => n.Alias === 'o');
    expect(rule.length).toBeGreaterThan(0);
    for (const n of rule) expect(indexesOf(n), describeScan(n)).toEqual(['inbox_queue_resource']);
    for (const n of scans(plan).filter((s) => s['Relation Name'] === 'inbox_deliveries')) expect(n['Node Type'], describeScan(n)).toBe('Index Scan');
  }

  beforeAll(async () => {
    t = await createTestDb();
    client = new pg.Client({ connectionString: t.url });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
    await t?.close();
  });

  it('is planned on every run (never a plan kept from an empty queue), and each plan finds rows by index, empty or with 100,000 rows', {
    timeout: 180_000,
  }, async () => {
    // Never analyzed: what autovacuum off leaves.
    const stats = await client.query<{ relname: string; reltuples: number }>(
      "SELECT relname, reltuples FROM pg_class WHERE relname IN ('inbox_queue', 'inbox_deliveries') ORDER BY relname",
    );
    expect(stats.rows.map((r) => r.reltuples)).toEqual([-1, -1]);

    // A generic plan made on the empty queue finds the claimed rows again by a sequential scan of the
    // whole queue (ten pages cost less than a TID scan): the trap the claim avoids by being planned
    // on every run, with the queue's size of the moment.
    expect(stmt.plan).toBe('unprepared');
    expect(stmt.options).toBeUndefined();
    const emptyGeneric = await genericPlan();
    expectChoosingScansIndexed(emptyGeneric);

    await client.query(
      `INSERT INTO inbox_deliveries (source, event_id, resource_id, event_type, body)
       SELECT CASE WHEN i % 100 = 0 THEN 'b' ELSE 'a' END, 'e' || i, 'r' || i, 't', '\\x7b7d' FROM generate_series(1, 100000) AS i`,
    );
    const stillNever = await client.query<{ reltuples: number }>("SELECT reltuples FROM pg_class WHERE relname = 'inbox_queue'");
    expect(stillNever.rows[0]!.reltuples).toBe(-1);

    // The plan a claim now runs with reads no table whole.
    const full = await runPlan();
    const seq = scans(full).filter((n) => n['Node Type'] === 'Seq Scan');
    expect(seq.map(describeScan)).toEqual([]);
    expectChoosingScansIndexed(full);
    // And the generic plan's row-choosing scans stay index scans at this size too.
    expectChoosingScansIndexed(await genericPlan());
  });
});

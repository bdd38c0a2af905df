import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publish } from '../src/outbox/publish.js';
import { claimStatement } from '../src/store/sql/outbox/claim-deliveries.js';
import { completeAttempts } from '../src/store/sql/outbox/complete-attempts.js';
import { cancelUnsentDeliveries } from '../src/store/sql/outbox/endpoints.js';
import { replayFailed, replayMessage, replayToEndpoint } from '../src/store/sql/outbox/operations.js';
import { recordAbandonedStatement } from '../src/store/sql/outbox/record-abandoned.js';
import { releaseUnstartedStatement } from '../src/store/sql/outbox/release-unstarted.js';
import { deleteOutboxMessages, trimOutboxPayloads } from '../src/store/sql/outbox/retention.js';
import { listTenantDeliveriesStatement, listTenantMessagesStatement } from '../src/store/sql/outbox/tenant-history.js';
import type { Statement } from '../src/store/sql/statement.js';
import { deleteTenantMessages } from '../src/store/sql/tenants/tenants.js';
import { createTestDb, onPostgres, type TestDb } from './helpers/db.js';
import { outboxHarness } from './helpers/outbox.js';

/**
 * The outbox tables' keys lead with tenant_id (migration 025). A statement that looked a delivery, a queue
 * row, a message or an attempt up by id alone would find no key for it: Postgres would read the key's
 * whole length (on one node), and a sharded cluster would ask every shard. So each statement that
 * touches those rows by key is planned here with sequential scans and hash and merge joins priced out (a
 * plan keeps one only where nothing else can serve), and every read of an outbox key must name tenant_id
 * in its index condition. The id-only indexes (outbox_deliveries_id, outbox_messages_id) serve the operator's
 * views across tenants; a statement here may use one only where it names the tenant too (a filter).
 */
interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Filter?: string;
  'Join Filter'?: string;
  'Hash Cond'?: string;
  'Merge Cond'?: string;
  Plans?: PlanNode[];
}

const OUTBOX = new Set(['outbox_messages', 'outbox_deliveries', 'outbox_queue', 'outbox_attempts']);
const TENANT_KEYS = new Set(['outbox_messages_pkey', 'outbox_deliveries_pkey', 'outbox_queue_pkey', 'outbox_attempts_pkey', 'outbox_deliveries_destination']);
const ID_ONLY = new Set(['outbox_deliveries_id', 'outbox_messages_id']);
/** Publishing's conflict key: no statement checked here looks a message up by its idempotency key. */
const NOT_HERE = new Set(['outbox_messages_idempotency_key_key']);

/** What is wrong with a plan: each sequential scan of an outbox table, each key read without its tenant. */
function problems(node: PlanNode, walksTenant: boolean, out: string[] = [], joinConditions = ''): string[] {
  const relation = node['Relation Name'];
  const index = node['Index Name'];
  if (node['Node Type'] === 'Seq Scan' && relation && OUTBOX.has(relation)) out.push(`Seq Scan on ${relation}`);
  // The id-only indexes are narrower than the keys, so the planner may pick one for a lookup that names the
  // tenant too: that lookup still names the shard. An id looked up without its tenant does not.
  if (index && ID_ONLY.has(index) && !/tenant_id/.test(`${node.Filter ?? ''} ${joinConditions}`))
    out.push(`${node['Node Type']} using ${index}: an id without its tenant`);
  // A key read by its tenant alone walks every row of the tenant: the id must be in the condition too,
  // unless walking one tenant's rows is the statement's purpose (its history, its deletion).
  const cond = node['Index Cond'] ?? '';
  if (index && TENANT_KEYS.has(index) && !(/tenant_id/.test(cond) && (walksTenant || /\b(id|delivery_id|message_id)\b/.test(cond)))) {
    out.push(`${node['Node Type']} using ${index} without tenant_id${walksTenant ? '' : ' and id'}: ${cond || 'no condition'}`);
  }
  if (index && NOT_HERE.has(index)) out.push(`${node['Node Type']} using ${index}: ${node['Index Cond'] ?? 'no condition'}`);
  // A join's own conditions apply to the rows its inner scan finds (a join filter, a hash condition).
  const conditions = [node['Join Filter'], node['Hash Cond'], node['Merge Cond']].filter(Boolean).join(' ');
  for (const child of node.Plans ?? []) problems(child, walksTenant, out, conditions);
  return out;
}

// Postgres only: the plans are the same planner's on the embedded store, and it is Postgres (and a cluster
// of them) whose statements must stay lookups.
describe.skipIf(!onPostgres)('outbox statements find their rows by (tenant_id, id)', () => {
  let t: TestDb;
  let endpointA: string;
  let messageA: string;
  let deliveryA: number;

  beforeAll(async () => {
    t = await createTestDb();
    const h = outboxHarness(t.db);
    for (const id of ['m_a', 'm_b']) await t.db.query('INSERT INTO tenants (id, name) VALUES ($1, $1)', [id]);
    endpointA = (await h.endpoints.create(t.db, { url: 'http://127.0.0.1:9/a', tenant_id: 'm_a' })).endpoint.id;
    await h.endpoints.create(t.db, { url: 'http://127.0.0.1:9/b', tenant_id: 'm_b' });
    for (let i = 0; i < 20; i++) {
      const tenantId = i % 2 === 0 ? 'm_a' : 'm_b';
      const { id } = await t.db.transaction((tx) => publish(tx, { tenantId, type: 'invoice.paid', resourceId: `inv_${i}`, data: { i } }));
      if (i === 0) messageA = id;
    }
    deliveryA = Number((await t.db.query<{ id: string }>('SELECT id FROM outbox_deliveries WHERE message_id = $1', [messageA])).rows[0]!.id);
    // Three attempts a delivery, as a history has (an empty table would be planned as the outer side of every join).
    await t.db.query(
      `INSERT INTO outbox_attempts (tenant_id, delivery_id, message_id, endpoint_id, attempt, url, started_at, duration_ms, succeeded)
       SELECT d.tenant_id, d.id, d.message_id, d.endpoint_id, n, 'http://127.0.0.1:9/', now(), 5, n = 3 FROM outbox_deliveries d, generate_series(1, 3) n`,
    );
    await t.db.query('ANALYZE outbox_messages, outbox_deliveries, outbox_queue, outbox_attempts');
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  /**
   * The plan's problems, planned both ways Postgres runs a statement: with its values (a custom plan) and,
   * as a prepared statement does after five runs, once for any values (the generic plan, whose estimates
   * know no value: a tenant's share of a table is a guess there).
   */
  async function planOf<P extends Record<string, unknown>>(statement: Statement<P, unknown>, values: P, walksTenant = false): Promise<string[]> {
    const found: string[] = [];
    for (const mode of ['force_custom_plan', 'force_generic_plan']) {
      await t.db.transaction(async (tx) => {
        // Joins as nested loops only: each row then finds its partner through an index, by what the
        // statement names, which is what is checked (on tables this small a hash join would read them whole).
        for (const setting of ['enable_seqscan', 'enable_hashjoin', 'enable_mergejoin']) await tx.query(`SET LOCAL ${setting} = off`);
        await tx.query(`SET LOCAL plan_cache_mode = ${mode}`);
        await tx.query(`PREPARE plan_check AS ${statement.text}`);
        // EXECUTE takes no bound parameters: each value goes as a literal, quoted by Postgres itself.
        const literals: string[] = [];
        for (const value of statement.bind(values)) {
          literals.push((await tx.query<{ q: string }>('SELECT quote_nullable($1::text) AS q', [value])).rows[0]!.q);
        }
        const { rows } = await tx.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`EXPLAIN (FORMAT JSON) EXECUTE plan_check(${literals.join(', ')})`);
        await tx.query('DEALLOCATE plan_check');
        for (const problem of problems(rows[0]!['QUERY PLAN'][0]!.Plan, walksTenant)) found.push(`${statement.name} (${mode}): ${problem}`);
      });
    }
    return found;
  }

  const one = { tenant_ids: ['m_a'], ids: [0], leases: ['l'], nexts: ['failed'], delays_ms: [0], status_codes: [500], errors: ['HTTP 500'] };

  it('the dispatcher: claim, completion (with an announced exhaustion), release, abandoned attempts', async () => {
    const ids = [deliveryA];
    expect(
      await planOf(claimStatement, {
        limit: 10,
        lease: 'l',
        lease_margin_ms: 1000,
        breaker_failures: 0,
        pace_margin_ms: 0,
        after_tenant: '',
        cursor_tenants: ['m_a'],
        cursor_after: [''],
        quantum: 32,
        tenant_cap: 1000,
        slow_free: 100,
      }),
    ).toEqual([]);
    expect(
      await planOf(completeAttempts, {
        ...one,
        ids,
        message_ids: [messageA],
        endpoint_ids: [endpointA],
        attempts: [1],
        urls: ['http://127.0.0.1:9/a'],
        started_ms: [Date.now()],
        durations_ms: [5],
        succeeded: [false],
        response_bodies: [null],
        dispatcher: 'd',
        streak_endpoint_ids: [endpointA],
        streak_resets: [false],
        streak_failures: [1],
        disable_after: 0,
        streak_attempt_resets: [false],
        streak_attempt_failures: [1],
        streak_probe_delays_ms: [0],
        breaker_failures: 0,
        exhausted_ids: ids,
        exhausted_event_ids: ['evt_x'],
        exhausted_message_ids: [messageA],
        exhausted_endpoint_ids: [endpointA],
        exhausted_attempts: [1],
        exhausted_urls: ['http://127.0.0.1:9/a'],
        exhausted_status_codes: [500],
        exhausted_errors: ['HTTP 500'],
      }),
    ).toEqual([]);
    expect(await planOf(releaseUnstartedStatement, { tenantIds: ['m_a'], ids, leases: ['l'] })).toEqual([]);
    expect(
      await planOf(recordAbandonedStatement, {
        tenantIds: ['m_a'],
        ids,
        messageIds: [messageA],
        endpointIds: [endpointA],
        attempts: [1],
        urls: ['u'],
        startedAt: [new Date()],
      }),
    ).toEqual([]);
  });

  it('replays, cancelling an endpoint, retention and deleting a tenant', async () => {
    expect(await planOf(replayToEndpoint, { tenantId: 'm_a', messageId: messageA, endpointId: endpointA })).toEqual([]);
    expect(await planOf(replayMessage, { tenantId: 'm_a', messageId: messageA })).toEqual([]);
    expect(await planOf(replayFailed, { endpointId: null, tenantId: 'm_a', since: null, until: null })).toEqual([]);
    expect(await planOf(cancelUnsentDeliveries, { endpointId: endpointA })).toEqual([]);
    expect(await planOf(trimOutboxPayloads, { tenantIds: ['m_a'], ids: [messageA] })).toEqual([]);
    expect(await planOf(deleteOutboxMessages, { tenantIds: ['m_a'], ids: [messageA] })).toEqual([]);
    expect(await planOf(deleteTenantMessages, { tenantId: 'm_a', batchSize: 100 }, true)).toEqual([]);
  });

  it("a tenant's history: its deliveries (also of one message, one type) and its messages", async () => {
    const filters = {
      before_id: null,
      endpoint_id: null,
      status: null,
      event_type: null,
      resource_id: null,
      since: null,
      until: null,
      message_id: null,
      limit: 51,
    };
    expect(await planOf(listTenantDeliveriesStatement, { ...filters, tenant_id: 'm_a' }, true)).toEqual([]);
    expect(await planOf(listTenantDeliveriesStatement, { ...filters, tenant_id: 'm_a', message_id: messageA }, true)).toEqual([]);
    expect(await planOf(listTenantDeliveriesStatement, { ...filters, tenant_id: 'm_a', event_type: 'invoice.paid' }, true)).toEqual([]);
    expect(await planOf(listTenantMessagesStatement, { ...filters, tenant_id: 'm_a' }, true)).toEqual([]);
  });

  it('the check itself: a lookup by id alone is reported', async () => {
    const byIdAlone = { name: 'by_id_alone', text: 'SELECT status FROM outbox_deliveries WHERE id = $1', bind: (v: { id: number }) => [v.id] };
    expect((await planOf(byIdAlone as unknown as Statement<{ id: number }, unknown>, { id: deliveryA })).join()).toMatch(
      /outbox_deliveries_id|without tenant_id/,
    );
  });
});

/**
 * How each table of tekil's schema would be placed on a sharded PostgreSQL (Citus), distributing the
 * inbox by `source`. docs/deploy.md explains the layout; test/schema-distribution.test.ts checks the
 * migrated schema against this list, so a migration that adds a table must place it here, and one
 * that breaks a rule fails unless the exception is written down below with its reason.
 *
 * The rules for a table distributed by `source`:
 * 1. it has a `source` column, and every primary key and unique index leads with `source` (Citus needs
 *    the distribution column in every unique constraint; leading with it keeps one source's lookups on
 *    one shard's index prefix);
 * 2. no foreign key joins it to another table unless both sides carry the same `source` (no key crosses
 *    sources, so nothing needs a cross-shard check).
 */
export type Placement =
  /** sharded by `source`, co-located with inbox_deliveries */
  | 'by-source'
  /** sharded by `tenant_id`, co-located with outbox_messages (the plan below: no table yet) */
  | 'by-tenant'
  /** small, read everywhere: a copy on every node (Citus reference table) */
  | 'reference'
  /** kept on the coordinator only (Citus local table): admin data, the sending side */
  | 'coordinator';

export const tablePlacement: Readonly<Record<string, Placement>> = {
  inbox_deliveries: 'by-source',
  inbox_queue: 'by-source',
  inbox_attempt_history: 'by-source',
  resources: 'by-source',
  // Alerts' per-minute signature failure counts (src/receiver/signature-failures.ts).
  signature_failures: 'by-source',
  reconcile_runs: 'coordinator',
  reconcile_findings: 'coordinator',
  // The sending side has no source: messages belong to a tenant (one per merchant), not to a provider
  // account. Its planned distribution column is tenant_id (tenantDistributionPlan below); until every
  // gap listed there is closed, the outbox tables stay on the coordinator.
  outbox_messages: 'coordinator',
  outbox_deliveries: 'coordinator',
  outbox_queue: 'coordinator',
  outbox_attempts: 'coordinator',
  // Tenants (one per merchant, migration 016) and their endpoints: small, read by every publish and
  // claim, joined by the outbox tables on any node once those are distributed by tenant_id.
  tenants: 'reference',
  endpoints: 'reference',
  endpoint_secrets: 'reference',
  operators: 'reference',
  dashboard_sessions: 'coordinator',
  // A tenant's tokens and its one-time portal links (migration 019): admin data, read by the api role.
  tenant_tokens: 'coordinator',
  portal_links: 'coordinator',
  dashboard_jobs: 'coordinator',
  // Admin data, written by the api role only.
  audit_events: 'coordinator',
  tekil_migrations: 'coordinator',
  // Alerts' incidents: a handful of rows, written by one evaluator at a time.
  incidents: 'coordinator',
  // Store outages reported by each process once the store answers again (store_unreachable): a few rows.
  store_outages: 'coordinator',
  // The provider simulator's own invoices (`tekil simulate`): test traffic, never a production table.
  sim_invoices: 'coordinator',
};

/**
 * Known breaks of the rules, each with why it is tolerated and what would remove it. Key:
 * `<table>.<index or constraint name>`.
 */
export const distributionExceptions: Readonly<Record<string, string>> = {
  'inbox_queue.inbox_queue_pkey':
    'the key is (event_id, source): it contains source, which is all Citus requires, but does not lead with it; a migration rebuilding it as (source, event_id) would close this',
  'inbox_attempt_history.inbox_attempts_pkey':
    'a serial id alone; before distributing, the key must become (source, id) — the table is written only by the completion statement, which has the source at hand',
};

/**
 * The sending side's plan: the outbox tables distributed by `tenant_id`, co-located, so one tenant's
 * messages, deliveries, queue rows and attempts sit on one shard, the fan-out of a message stays on its
 * tenant's shard, and a tenant's history is a single-shard query. The rules, as for `source` above:
 * 1. the table has a `tenant_id` column, and every primary key and unique index leads with it;
 * 2. no foreign key touches it unless both sides carry `tenant_id` and join on it (reference tables
 *    such as endpoints may be referenced freely).
 * Not applied yet: the outbox tables keep their keys (docs/deploy.md, "Sharding the sending side").
 */
export const tenantDistributedTables = ['outbox_messages', 'outbox_deliveries', 'outbox_queue', 'outbox_attempts'] as const;

/**
 * Every present break of those rules, each with the step that closes it. Key: `<table>.tenant_id` for a
 * missing column, `<table>.<index or constraint>` for a key. test/schema-distribution.test.ts checks that
 * this list is exactly what the schema lacks: a new unique key on an outbox table must lead with
 * tenant_id or be written here, and a migration that closes a gap removes its entry.
 *
 * The order of work (each step measured with bench:dispatch and bench:publish, no more than 5% slower):
 * the column first, filled by the fan-out from the message; then every statement that finds a delivery,
 * a queue row or an attempt by id (claim, complete, write completions, release, cancel, replay,
 * retention, the lists) carries tenant_id with the id (`(tenant_id, id) IN (…)`, joins on both), checked
 * with EXPLAIN; the keys last. Rebuilding a key before its statements carry tenant_id makes every
 * lookup by id alone a scan of the new key's second column.
 */
export const tenantKeyGaps: Readonly<Record<string, string>> = {
  'outbox_messages.outbox_messages_pkey':
    'the key is (id): it becomes (tenant_id, id); outbox_messages_tenant (tenant_id, id) already holds that order, so the rebuild can reuse its columns',
  'outbox_messages.outbox_messages_idempotency_key_key':
    'idempotency keys are unique over all tenants; on Citus they can only be unique per tenant: (tenant_id, idempotency_key), which two tenants reusing a key would notice (a documented change)',
  'outbox_deliveries.tenant_id':
    'no column: the fan-out (tekil_outbox_publish, _many) writes it from the message, one more text value per delivery; today a delivery’s tenant is its endpoint’s (migration 021)',
  'outbox_deliveries.outbox_deliveries_pkey': 'the key is (id): it becomes (tenant_id, id), once claim, complete and the completions carry tenant_id',
  'outbox_deliveries.outbox_deliveries_destination':
    'the fan-out’s conflict key (message_id, endpoint_id, url): it becomes (tenant_id, message_id, endpoint_id, url), and ON CONFLICT names it so',
  'outbox_queue.tenant_id': 'no column: the fan-out writes it with the queue row; the claim reads it to name the delivery it leases',
  'outbox_queue.outbox_queue_pkey': 'the key is (delivery_id): it becomes (tenant_id, delivery_id)',
  'outbox_attempts.tenant_id': 'no column: the completion statement writes it, having the claimed delivery’s tenant at hand',
  'outbox_attempts.outbox_attempts_pkey': 'a serial id alone: it becomes (tenant_id, id)',
};

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
  /** sharded by `tenant_id`, co-located with outbox_messages (migration 025) */
  | 'by-tenant'
  /** small, read everywhere: a copy on every node (Citus reference table) */
  | 'reference'
  /** kept on the coordinator only (Citus local table): admin data, runs, sessions */
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
  // account. Distributed by tenant_id (migration 025: every key leads with it), co-located, so one
  // tenant's messages, deliveries, queue rows and attempts sit on one shard.
  outbox_messages: 'by-tenant',
  outbox_deliveries: 'by-tenant',
  outbox_queue: 'by-tenant',
  outbox_attempts: 'by-tenant',
  // Requests each tenant finished (migration 026: the per-tenant cap's count), written by the completions
  // of its deliveries: one row per tenant, keyed by tenant_id, beside that tenant's outbox rows.
  outbox_tenant_done: 'by-tenant',
  // Tenants (one per merchant, migration 016) and their endpoints: small, read by every publish and
  // claim, joined by the outbox tables on any node once those are distributed by tenant_id.
  tenants: 'reference',
  endpoints: 'reference',
  endpoint_secrets: 'reference',
  // A tenant's Ed25519 key pairs (migration 035): a few rows per tenant, read with the endpoints' secrets
  // by every dispatcher, and served by the api role's JWKS route.
  tenant_signing_keys: 'reference',
  // The event catalogue (migration 037): a few hundred rows at most, read by every publishing process.
  event_types: 'reference',
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
 * The sending side: the outbox tables distributed by `tenant_id`, co-located, so one tenant's messages,
 * deliveries, queue rows and attempts sit on one shard, the fan-out of a message stays on its tenant's
 * shard, and a tenant's history is a single-shard query. The rules, as for `source` above:
 * 1. the table has a `tenant_id` column, and every primary key and unique index leads with it;
 * 2. no foreign key touches it unless both sides carry `tenant_id` and join on it (reference tables
 *    such as endpoints may be referenced freely).
 * Migration 025 applied them; test/outbox-tenant-plans.test.ts checks that the statements of the hot
 * paths find their rows by (tenant_id, id), so none of them asks every shard.
 */
export const tenantDistributedTables = ['outbox_messages', 'outbox_deliveries', 'outbox_queue', 'outbox_attempts'] as const;

/**
 * Every present break of those rules, each with the step that closes it. Key: `<table>.tenant_id` for a
 * missing column, `<table>.<index or constraint>` for a key. test/schema-distribution.test.ts checks that
 * this list is exactly what the schema lacks: a new unique key on an outbox table must lead with
 * tenant_id or be written here (and the table goes back to the coordinator until it is closed).
 */
export const tenantKeyGaps: Readonly<Record<string, string>> = {};

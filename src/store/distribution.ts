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
  // The sending side has no source: messages belong to the application, not to a provider account.
  // On Citus they stay on the coordinator, or are distributed together by message id (see deploy.md).
  outbox_messages: 'coordinator',
  outbox_deliveries: 'coordinator',
  outbox_queue: 'coordinator',
  outbox_attempts: 'coordinator',
  // Tenants (one per merchant, migration 016): small, read by every publish and claim. The outbox
  // tables are to be distributed by tenant_id, co-located, once their keys lead with it (today only
  // outbox_messages and endpoints carry it); until then they stay on the coordinator.
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

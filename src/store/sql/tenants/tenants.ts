import { defineStatement } from '../statement.js';

/** Tenants (migration 016): one per merchant. A tenant being deleted (deleted_at set) is not shown. */

export interface TenantRow {
  id: string;
  name: string | null;
  metadata: Record<string, unknown>;
  disabled: boolean;
  /** Defaults for the tenant's endpoints (migration 027); null: the file's. */
  ladder: unknown;
  timeout_ms: number | null;
  rate_limit: string | null;
  endpoint_max_in_flight: number | null;
  event_id: string | null;
  /** Requests in flight across the tenant's endpoints (null: sending.tenant_max_in_flight) and its weight in the claim. */
  max_in_flight: number | null;
  weight: number;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = `id, name, metadata, disabled, ladder, timeout_ms, rate_limit, endpoint_max_in_flight, event_id_mode AS event_id, max_in_flight, weight,
  created_at, updated_at`;

/** A tenant's settings as a statement's parameters: each one's value, and whether it is given (a given null clears it). */
export interface TenantSettingsParams extends Record<string, unknown> {
  ladderJson: string | null;
  setLadder: boolean;
  timeoutMs: number | null;
  setTimeout: boolean;
  rateLimit: string | null;
  setRateLimit: boolean;
  endpointMaxInFlight: number | null;
  setEndpointMaxInFlight: boolean;
  eventId: string | null;
  setEventId: boolean;
  maxInFlight: number | null;
  setMaxInFlight: boolean;
  weight: number | null;
}

const SETTINGS = `
     ladder = CASE WHEN $setLadder::boolean THEN $ladderJson::jsonb ELSE ladder END,
     timeout_ms = CASE WHEN $setTimeout::boolean THEN $timeoutMs::int ELSE timeout_ms END,
     rate_limit = CASE WHEN $setRateLimit::boolean THEN $rateLimit::text ELSE rate_limit END,
     endpoint_max_in_flight = CASE WHEN $setEndpointMaxInFlight::boolean THEN $endpointMaxInFlight::int ELSE endpoint_max_in_flight END,
     event_id_mode = CASE WHEN $setEventId::boolean THEN $eventId::text ELSE event_id_mode END,
     max_in_flight = CASE WHEN $setMaxInFlight::boolean THEN $maxInFlight::int ELSE max_in_flight END,
     weight = coalesce($weight::int, weight)`;

export const selectTenant = defineStatement<{ id: string }, TenantRow>(
  'tekil_tenants_select',
  `SELECT ${COLUMNS} FROM tenants WHERE id = $id AND deleted_at IS NULL`,
);

/** A page of tenants in id order, after `afterId`. */
export const listTenants = defineStatement<{ afterId: string | null; limit: number }, TenantRow>(
  'tekil_tenants_list',
  `SELECT ${COLUMNS} FROM tenants WHERE deleted_at IS NULL AND ($afterId::text IS NULL OR id > $afterId) ORDER BY id LIMIT $limit`,
);

/** No row when the id is taken (by a live tenant or one being deleted). */
export const insertTenant = defineStatement<
  {
    id: string;
    name: string | null;
    metadataJson: string;
    disabled: boolean;
    ladderJson: string | null;
    timeoutMs: number | null;
    rateLimit: string | null;
    endpointMaxInFlight: number | null;
    eventId: string | null;
    maxInFlight: number | null;
    weight: number;
  },
  TenantRow
>(
  'tekil_tenants_insert',
  `INSERT INTO tenants (id, name, metadata, disabled, ladder, timeout_ms, rate_limit, endpoint_max_in_flight, event_id_mode, max_in_flight, weight)
   VALUES ($id, $name, $metadataJson::jsonb, $disabled, $ladderJson::jsonb, $timeoutMs::int, $rateLimit::text, $endpointMaxInFlight::int, $eventId::text,
     $maxInFlight::int, $weight::int)
   ON CONFLICT (id) DO NOTHING RETURNING ${COLUMNS}`,
);

/** Sets the fields given (a null parameter leaves its column as it is; `name` is cleared with `clearName`). */
export const updateTenant = defineStatement<
  { id: string; name: string | null; clearName: boolean; metadataJson: string | null; disabled: boolean | null } & TenantSettingsParams,
  TenantRow
>(
  'tekil_tenants_update',
  `UPDATE tenants SET
     name = CASE WHEN $clearName::boolean THEN NULL ELSE coalesce($name::text, name) END,
     metadata = coalesce($metadataJson::jsonb, metadata),
     disabled = coalesce($disabled::boolean, disabled),${SETTINGS},
     updated_at = now()
   WHERE id = $id AND deleted_at IS NULL RETURNING ${COLUMNS}`,
);

/**
 * The start of a confirmed delete: publishing refuses the tenant from now on and the dispatcher stops
 * claiming its deliveries. Repeating it on a tenant already being deleted resumes that delete.
 */
export const markTenantDeleting = defineStatement<{ id: string }, { id: string }>(
  'tekil_tenants_mark_deleting',
  `UPDATE tenants SET deleted_at = coalesce(deleted_at, now()), disabled = true, updated_at = now() WHERE id = $id RETURNING id`,
);

/**
 * One batch of a tenant's delete: up to `batchSize` of its messages, with their deliveries, their
 * attempts and their queue rows (the outbox keeps no foreign keys on its hot paths: migration 012).
 * FOR UPDATE waits for a replay holding a message (SKIP LOCKED would leave it behind).
 */
export const deleteTenantMessages = defineStatement<{ tenantId: string; batchSize: number }, { messages: number; deliveries: number }>(
  'tekil_tenants_delete_messages',
  `
WITH message AS (
  DELETE FROM outbox_messages m WHERE m.tenant_id = $tenantId AND m.id IN (
    SELECT id FROM outbox_messages WHERE tenant_id = $tenantId ORDER BY tenant_id, id LIMIT $batchSize FOR UPDATE)
  RETURNING m.tenant_id, m.id
), delivery AS (
  DELETE FROM outbox_deliveries od USING message WHERE od.tenant_id = message.tenant_id AND od.message_id = message.id RETURNING od.tenant_id, od.id
), attempt AS (
  DELETE FROM outbox_attempts a USING delivery WHERE a.tenant_id = delivery.tenant_id AND a.delivery_id = delivery.id
), queued AS (
  DELETE FROM outbox_queue q USING delivery WHERE q.tenant_id = delivery.tenant_id AND q.delivery_id = delivery.id
)
SELECT (SELECT count(*) FROM message)::int AS messages, (SELECT count(*) FROM delivery)::int AS deliveries`,
);

/**
 * One batch of what is left of a tenant's outbox once its messages are gone: deliveries whose message
 * retention or a crash removed first (each row carries the tenant: migration 025), with their attempts
 * and queue rows.
 */
export const deleteTenantDeliveries = defineStatement<{ tenantId: string; batchSize: number }, { deliveries: number }>(
  'tekil_tenants_delete_deliveries',
  `
WITH delivery AS (
  DELETE FROM outbox_deliveries od WHERE od.tenant_id = $tenantId AND od.id IN (
    SELECT id FROM outbox_deliveries WHERE tenant_id = $tenantId ORDER BY tenant_id, id LIMIT $batchSize FOR UPDATE)
  RETURNING od.tenant_id, od.id
), attempt AS (
  DELETE FROM outbox_attempts a USING delivery WHERE a.tenant_id = delivery.tenant_id AND a.delivery_id = delivery.id
), queued AS (
  DELETE FROM outbox_queue q USING delivery WHERE q.tenant_id = delivery.tenant_id AND q.delivery_id = delivery.id
)
SELECT count(*)::int AS deliveries FROM delivery`,
);

/** Attempts and queue rows of the tenant whose delivery is already gone (the last step, a few rows at most). */
export const deleteTenantLeftovers = defineStatement<{ tenantId: string }, never>(
  'tekil_tenants_delete_leftovers',
  `
WITH attempt AS (DELETE FROM outbox_attempts WHERE tenant_id = $tenantId)
DELETE FROM outbox_queue WHERE tenant_id = $tenantId`,
);

/** The tenant's endpoints (their secrets go with them: ON DELETE CASCADE), then the tenant itself. */
export const deleteTenantEndpoints = defineStatement<{ tenantId: string }, { id: string }>(
  'tekil_tenants_delete_endpoints',
  'DELETE FROM endpoints WHERE tenant_id = $tenantId RETURNING id',
);
export const deleteTenantRow = defineStatement<{ id: string }, { id: string }>(
  'tekil_tenants_delete',
  // With its count of finished requests (migration 026): a tenant made again under the id starts at 0.
  `WITH gone AS (DELETE FROM tenants WHERE id = $id AND deleted_at IS NOT NULL RETURNING id),
   done AS (DELETE FROM outbox_tenant_done o USING gone WHERE o.tenant_id = gone.id)
   SELECT id FROM gone`,
);

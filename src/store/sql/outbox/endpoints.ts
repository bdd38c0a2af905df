import { defineStatement, type Statement } from '../statement.js';

/** Endpoint administration: small statements, one file. */

/** The columns an endpoint is shown with (never its secrets). */
const COLUMNS = `id, tenant_id, kind, url, description, event_types, ladder, timeout_ms, max_in_flight, scheme, scheme_options AS hmac, enabled, disabled_reason,
  consecutive_failures, rate_limit, failed_attempts_in_row, probe_at AS next_probe_at, event_id, own_settings, signing,
  CASE WHEN slow_p90_ms IS NULL THEN NULL ELSE json_build_object('p90_ms', slow_p90_ms) END AS slow, created_at, updated_at`;

/** An endpoint as stored. `ladder` and `hmac` are jsonb the endpoint store validated before writing them. */
export interface EndpointRow {
  id: string;
  tenant_id: string;
  /** `http`, or the broker it publishes to (migration 036). */
  kind: string;
  url: string;
  description: string | null;
  event_types: string[];
  ladder: unknown;
  timeout_ms: number;
  max_in_flight: number;
  scheme: string;
  hmac: unknown;
  enabled: boolean;
  disabled_reason: string | null;
  consecutive_failures: number;
  rate_limit: string | null;
  failed_attempts_in_row: number;
  /** While the circuit breaker is open, when its next probe may start; null while it is closed. */
  next_probe_at: Date | null;
  event_id: string;
  /** The settings set on the endpoint itself (migration 027); the others are its tenant's, else the file's. */
  own_settings: string[];
  /** What its requests carry (migration 035): `v1` (HMAC), `v1a` (Ed25519) or `both`. */
  signing: string;
  /** The slow lane (migration 026): the endpoint's recent p90, or null. */
  slow: { p90_ms: number } | null;
  created_at: Date;
  updated_at: Date;
}

export const selectEndpoint = defineStatement<{ id: string }, EndpointRow>(
  'tekil_outbox_select_endpoint',
  `SELECT ${COLUMNS} FROM endpoints WHERE id = $id AND deleted_at IS NULL`,
);
export const listEndpoints = defineStatement<{ tenantId: string | null }, EndpointRow>(
  'tekil_outbox_list_endpoints',
  `SELECT ${COLUMNS} FROM endpoints WHERE deleted_at IS NULL AND ($tenantId::text IS NULL OR tenant_id = $tenantId) ORDER BY created_at, id`,
);

/** No row when the tenant does not exist or is being deleted. */
export const insertEndpoint = defineStatement<
  {
    id: string;
    tenant_id: string;
    kind: string;
    url: string;
    /** The whole broker URL, sealed; null for HTTP. */
    destination_enc: string | null;
    description: string | null;
    event_types: string[];
    ladder_json: string;
    timeout_ms: number;
    max_in_flight: number;
    scheme: string;
    hmac_json: string | null;
    enabled: boolean;
    rate_limit: string | null;
    send_interval_ms: number | null;
    event_id: string;
    own_settings: string[];
    signing: string;
  },
  EndpointRow
>(
  'tekil_outbox_insert_endpoint',
  `INSERT INTO endpoints (id, tenant_id, kind, url, destination_enc, description, event_types, ladder, timeout_ms, max_in_flight, scheme, scheme_options, enabled, rate_limit, send_interval_ms, event_id,
     own_settings, signing)
   SELECT $id, t.id, $kind, $url, $destination_enc, $description, $event_types, $ladder_json::jsonb, $timeout_ms, $max_in_flight, $scheme, $hmac_json::jsonb, $enabled, $rate_limit, $send_interval_ms, $event_id,
     $own_settings::text[], $signing
   FROM tenants t WHERE t.id = $tenant_id AND t.deleted_at IS NULL
   RETURNING ${COLUMNS}`,
);

/** Columns an update may set, each with the cast its parameter needs. */
export const UPDATABLE_COLUMNS = {
  kind: '',
  url: '',
  destination_enc: '',
  description: '',
  event_types: '',
  ladder: '::jsonb',
  timeout_ms: '',
  max_in_flight: '',
  scheme: '',
  scheme_options: '::jsonb',
  enabled: '',
  disabled_reason: '',
  rate_limit: '',
  send_interval_ms: '::double precision',
  event_id: '',
  own_settings: '::text[]',
  signing: '',
} as const;
export type UpdatableColumn = keyof typeof UPDATABLE_COLUMNS;

/** An update's values: the endpoint's id, and one value for each column it sets (named after it). */
export type EndpointUpdateParams = { id: string } & Partial<Record<UpdatableColumn, unknown>>;

const updates = new Map<string, Statement<EndpointUpdateParams, EndpointRow>>();

/**
 * The UPDATE of the given columns: the one statement of this file whose text varies, since an update
 * writes only the columns an operator changed (a column set to its own value would still count as
 * written). Its text comes only from the column whitelist above, each column bound as `$<column>`;
 * `resetStreak` also clears the disabled reason and the failure streak (re-enabling). One named
 * Statement per combination, made once.
 */
export function updateEndpointStatement(columns: readonly UpdatableColumn[], resetStreak: boolean): Statement<EndpointUpdateParams, EndpointRow> {
  const key = `${columns.join(',')}${resetStreak ? '+reset' : ''}`;
  let stmt = updates.get(key);
  if (!stmt) {
    const sets = columns.map((c) => `${c} = $${c}${UPDATABLE_COLUMNS[c]}`);
    if (resetStreak) sets.push('disabled_reason = NULL, consecutive_failures = 0, failed_attempts_in_row = 0, probe_at = NULL');
    stmt = defineStatement<EndpointUpdateParams, EndpointRow>(
      `tekil_outbox_update_endpoint_${columns.join('_')}${resetStreak ? '_reset' : ''}`,
      `UPDATE endpoints SET ${sets.join(', ')}, updated_at = now() WHERE id = $id AND deleted_at IS NULL RETURNING ${COLUMNS}`,
    );
    updates.set(key, stmt);
  }
  return stmt;
}

export const markEndpointDeleted = defineStatement<{ id: string }, { id: string }>(
  'tekil_outbox_mark_endpoint_deleted',
  `
UPDATE endpoints SET deleted_at = now(), enabled = false, disabled_reason = 'deleted', updated_at = now()
WHERE id = $id AND deleted_at IS NULL RETURNING id`,
);
export const deleteEndpointSecrets = defineStatement<{ endpointId: string }, never>(
  'tekil_outbox_delete_endpoint_secrets',
  'DELETE FROM endpoint_secrets WHERE endpoint_id = $endpointId',
);
/** The endpoint's unsent deliveries (found through the queue) are cancelled and leave the queue. */
export const cancelUnsentDeliveries = defineStatement<{ endpointId: string }, never>(
  'tekil_outbox_cancel_unsent',
  `
WITH cancelled AS (
  UPDATE outbox_deliveries d SET status = 'cancelled', completed_at = now(), lease = NULL
  FROM outbox_queue q
  WHERE q.endpoint_id = $endpointId AND NOT q.failed AND d.tenant_id = q.tenant_id AND d.id = q.delivery_id AND d.status IN ('pending', 'sending')
  RETURNING d.tenant_id, d.id
)
DELETE FROM outbox_queue q USING cancelled WHERE q.tenant_id = cancelled.tenant_id AND q.delivery_id = cancelled.id`,
);

export const insertEndpointSecret = defineStatement<{ endpointId: string; secretEnc: string }, never>(
  'tekil_outbox_insert_endpoint_secret',
  'INSERT INTO endpoint_secrets (endpoint_id, secret_enc) VALUES ($endpointId, $secretEnc)',
);
/** Live secrets expire at the window's end (none is lengthened). */
export const expireLiveSecrets = defineStatement<{ endpointId: string; windowMs: number }, { expires_at: Date }>(
  'tekil_outbox_expire_live_secrets',
  `
UPDATE endpoint_secrets SET expires_at = now() + $windowMs::double precision * interval '1 millisecond'
WHERE endpoint_id = $endpointId AND (expires_at IS NULL OR expires_at > now() + $windowMs::double precision * interval '1 millisecond')
RETURNING expires_at`,
);
export const deleteExpiredSecrets = defineStatement<{ endpointId: string }, never>(
  'tekil_outbox_delete_expired_secrets',
  'DELETE FROM endpoint_secrets WHERE endpoint_id = $endpointId AND expires_at <= now()',
);
/** A new updated_at invalidates every dispatcher's cached secrets of the endpoint. */
export const touchEndpoint = defineStatement<{ id: string }, never>('tekil_outbox_touch_endpoint', 'UPDATE endpoints SET updated_at = now() WHERE id = $id');

/** A broker endpoint's sealed URL (migration 036), for the dispatcher; null for HTTP. */
export const selectEndpointDestination = defineStatement<{ id: string }, { destination_enc: string | null }>(
  'tekil_outbox_endpoint_destination',
  'SELECT destination_enc FROM endpoints WHERE id = $id',
  'prepared',
);

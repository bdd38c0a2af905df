import { defineStatement } from '../statement.js';

/**
 * Writes the inherited settings of endpoints (migration 027): each setting an endpoint did not set
 * itself (not in own_settings) becomes its tenant's default, else the file's. Run for one endpoint
 * after it is created or changed, for a tenant's endpoints after the tenant's defaults change, and for
 * every endpoint when a dispatcher starts (the file's defaults may have changed). Only rows whose
 * values change are written, so a run that changes nothing writes nothing and leaves every cache alone.
 */
export interface InheritedSettingsParams extends Record<string, unknown> {
  /** One endpoint; null for every endpoint of `tenantId` (or of every tenant when both are null). */
  endpointId: string | null;
  tenantId: string | null;
  /** The file's defaults (sending.*). */
  ladderJson: string;
  timeoutMs: number;
  maxInFlight: number;
  /** sending.event_id: `message` or `delivery`. */
  eventIdMode: string;
}

/** The gap a rate limit makes between two requests, in SQL (src/outbox/endpoints.ts, sendIntervalMs). */
const INTERVAL = (rate: string) =>
  `(CASE split_part(${rate}, '/', 2) WHEN 's' THEN 1000 WHEN 'm' THEN 60000 ELSE 3600000 END)::double precision / split_part(${rate}, '/', 1)::int`;

export const writeInheritedSettings = defineStatement<InheritedSettingsParams, { id: string }>(
  'tekil_outbox_inherited_settings',
  `
WITH resolved AS (
  SELECT e.id,
    CASE WHEN 'ladder' = ANY (e.own_settings) THEN e.ladder ELSE coalesce(t.ladder, $ladderJson::jsonb) END AS ladder,
    CASE WHEN 'timeout' = ANY (e.own_settings) THEN e.timeout_ms ELSE coalesce(t.timeout_ms, $timeoutMs::int) END AS timeout_ms,
    CASE WHEN 'max_in_flight' = ANY (e.own_settings) THEN e.max_in_flight ELSE coalesce(t.endpoint_max_in_flight, $maxInFlight::int) END AS max_in_flight,
    CASE WHEN 'rate_limit' = ANY (e.own_settings) THEN e.rate_limit ELSE t.rate_limit END AS rate_limit,
    CASE WHEN 'event_id' = ANY (e.own_settings) THEN e.event_id ELSE coalesce(t.event_id_mode, $eventIdMode::text) END AS event_id
  FROM endpoints e JOIN tenants t ON t.id = e.tenant_id
  WHERE e.deleted_at IS NULL
    AND ($endpointId::text IS NULL OR e.id = $endpointId::text)
    AND ($tenantId::text IS NULL OR e.tenant_id = $tenantId::text)
    AND cardinality(e.own_settings) < 5
)
UPDATE endpoints e SET ladder = r.ladder, timeout_ms = r.timeout_ms, max_in_flight = r.max_in_flight, rate_limit = r.rate_limit,
  send_interval_ms = CASE WHEN r.rate_limit IS NULL THEN NULL ELSE ${INTERVAL('r.rate_limit')} END,
  event_id = r.event_id, updated_at = now()
FROM resolved r
WHERE e.id = r.id
  AND (e.ladder, e.timeout_ms, e.max_in_flight, e.rate_limit, e.event_id) IS DISTINCT FROM (r.ladder, r.timeout_ms, r.max_in_flight, r.rate_limit, r.event_id)
RETURNING e.id`,
);

import { defineStatement } from '../statement.js';

/** Endpoint administration: small statements, one file. */

/** The columns an endpoint is shown with (never its secrets). */
const COLUMNS = `id, url, description, event_types, ladder, timeout_ms, max_in_flight, scheme, scheme_options AS hmac, enabled, disabled_reason,
  consecutive_failures, created_at, updated_at`;

export const SELECT_ENDPOINT = `SELECT ${COLUMNS} FROM endpoints WHERE id = $1 AND deleted_at IS NULL`;
export const LIST_ENDPOINTS = `SELECT ${COLUMNS} FROM endpoints WHERE deleted_at IS NULL ORDER BY created_at, id`;

export const insertEndpoint = defineStatement<{
  id: string;
  url: string;
  description: string | null;
  event_types: string[];
  ladder_json: string;
  timeout_ms: number;
  max_in_flight: number;
  scheme: string;
  hmac_json: string | null;
  enabled: boolean;
}>(
  'tekil_outbox_insert_endpoint',
  `INSERT INTO endpoints (id, url, description, event_types, ladder, timeout_ms, max_in_flight, scheme, scheme_options, enabled)
   VALUES ($id, $url, $description, $event_types, $ladder_json::jsonb, $timeout_ms, $max_in_flight, $scheme, $hmac_json::jsonb, $enabled)
   RETURNING ${COLUMNS}`,
);

/** Columns an update may set, each with the cast its parameter needs. */
export const UPDATABLE_COLUMNS = {
  url: '',
  description: '',
  event_types: '',
  ladder: '::jsonb',
  timeout_ms: '',
  max_in_flight: '',
  scheme: '',
  scheme_options: '::jsonb',
  enabled: '',
  disabled_reason: '',
} as const;
export type UpdatableColumn = keyof typeof UPDATABLE_COLUMNS;

/**
 * An UPDATE of the given columns ($1 is the id, the values follow in order); `extra` is fixed SQL
 * appended to the SET list (never user input).
 */
export function updateEndpointSql(columns: readonly UpdatableColumn[], extra: readonly string[] = []): string {
  const sets = columns.map((c, i) => `${c} = $${i + 2}${UPDATABLE_COLUMNS[c]}`).concat(extra);
  return `UPDATE endpoints SET ${sets.join(', ')}, updated_at = now() WHERE id = $1 AND deleted_at IS NULL RETURNING ${COLUMNS}`;
}

export const MARK_ENDPOINT_DELETED = `
UPDATE endpoints SET deleted_at = now(), enabled = false, disabled_reason = 'deleted', updated_at = now()
WHERE id = $1 AND deleted_at IS NULL RETURNING id`;
export const DELETE_ENDPOINT_SECRETS = 'DELETE FROM endpoint_secrets WHERE endpoint_id = $1';
/** $1 endpoint: its unsent deliveries (found through the queue) are cancelled and leave the queue. */
export const CANCEL_UNSENT_DELIVERIES = `
WITH cancelled AS (
  UPDATE outbox_deliveries d SET status = 'cancelled', completed_at = now(), lease = NULL
  FROM outbox_queue q
  WHERE q.endpoint_id = $1 AND NOT q.failed AND d.id = q.delivery_id AND d.status IN ('pending', 'sending')
  RETURNING d.id
)
DELETE FROM outbox_queue q USING cancelled WHERE q.delivery_id = cancelled.id`;

export const INSERT_ENDPOINT_SECRET = 'INSERT INTO endpoint_secrets (endpoint_id, secret_enc) VALUES ($1, $2)';
/** $1 endpoint, $2 window in ms: live secrets expire at the window's end (none is lengthened). */
export const EXPIRE_LIVE_SECRETS = `
UPDATE endpoint_secrets SET expires_at = now() + $2::double precision * interval '1 millisecond'
WHERE endpoint_id = $1 AND (expires_at IS NULL OR expires_at > now() + $2::double precision * interval '1 millisecond')
RETURNING expires_at`;
export const DELETE_EXPIRED_SECRETS = 'DELETE FROM endpoint_secrets WHERE endpoint_id = $1 AND expires_at <= now()';
/** A new updated_at invalidates every dispatcher's cached secrets of the endpoint. */
export const TOUCH_ENDPOINT = 'UPDATE endpoints SET updated_at = now() WHERE id = $1';

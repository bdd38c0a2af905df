import { defineStatement } from '../statement.js';

/** What a message was published with, as far as it is stored: to compare a repeat of its idempotency key with. */
export interface PublishedRequestRow {
  tenant_id: string;
  event_type: string;
  resource_id: string | null;
  /** The envelope as sent (empty once retention trimmed it). */
  payload: Uint8Array;
  trimmed: boolean;
  /** Its extra destinations: `[endpoint_id, url]` pairs, in no particular order. */
  extras: Array<[string, string]>;
}

/** One message's stored request (rare: read only for a repeated idempotency key). */
export const publishedRequest = defineStatement<{ tenantId: string; id: string }, PublishedRequestRow>(
  'tekil_outbox_published_request',
  `SELECT m.tenant_id, m.event_type, m.resource_id, m.payload, m.trimmed_at IS NOT NULL AS trimmed,
          coalesce((SELECT json_agg(json_build_array(d.endpoint_id, d.url)) FROM outbox_deliveries d
                    WHERE d.tenant_id = m.tenant_id AND d.message_id = m.id AND d.url IS NOT NULL), '[]'::json) AS extras
   FROM outbox_messages m WHERE m.tenant_id = $tenantId AND m.id = $id`,
);

import { defineStatement } from '../statement.js';

/** The statuses outbox_deliveries allows (its CHECK constraint). */
export type OutboxDeliveryStatusValue = 'pending' | 'sending' | 'succeeded' | 'failed' | 'cancelled';

export interface MessageListRow {
  id: string;
  tenant_id: string;
  event_type: string;
  resource_id: string | null;
  created_at: Date;
  /** Delivery counts by status. */
  deliveries: Partial<Record<OutboxDeliveryStatusValue, number>>;
}

export interface DeliveryListRow {
  id: number;
  message_id: string;
  endpoint_id: string;
  url: string;
  status: OutboxDeliveryStatusValue;
  attempts: number;
  next_attempt_at: Date | null;
  last_status_code: number | null;
  last_error: string | null;
  last_attempt_at: Date | null;
  created_at: Date;
  completed_at: Date | null;
  event_type: string;
  resource_id: string | null;
  /** When the message's payload was erased on request (docs/erasure.md); null unless erased. */
  erased_at: Date | null;
  last_duration_ms: number | null;
  /** The endpoint's event id mode: the id its receiver sees is derived from it (src/outbox/ids.ts). */
  event_id_mode: string;
}

export interface AttemptRow {
  id: number;
  delivery_id: number;
  attempt: number;
  url: string;
  started_at: Date;
  duration_ms: number;
  succeeded: boolean;
  status_code: number | null;
  error: string | null;
  response_body: string | null;
}

/** The delivery history: message and delivery lists (newest first, keyset pages), one message's attempts. */

export interface MessageListParams extends Record<string, unknown> {
  before_id: string | null;
  tenant_id: string | null;
  event_type: string | null;
  resource_id: string | null;
  since: Date | null;
  until: Date | null;
  endpoint_id: string | null;
  status: string | null;
  limit: number;
}

/** Messages, newest first (ids are time-ordered); endpoint and status filters match any of its deliveries. */
export const listMessagesStatement = defineStatement<MessageListParams, MessageListRow>(
  'tekil_outbox_list_messages',
  `
SELECT m.id, m.tenant_id, m.event_type, m.resource_id, m.created_at,
  coalesce((SELECT jsonb_object_agg(s.status, s.n) FROM
    (SELECT status, count(*) AS n FROM outbox_deliveries WHERE tenant_id = m.tenant_id AND message_id = m.id GROUP BY status) s), '{}'::jsonb) AS deliveries
FROM outbox_messages m
WHERE ($before_id::text IS NULL OR m.id < $before_id)
  AND ($tenant_id::text IS NULL OR m.tenant_id = $tenant_id)
  AND ($event_type::text IS NULL OR m.event_type = $event_type)
  AND ($resource_id::text IS NULL OR m.resource_id = $resource_id)
  AND ($since::timestamptz IS NULL OR m.created_at >= $since)
  AND ($until::timestamptz IS NULL OR m.created_at < $until)
  AND ($endpoint_id::text IS NULL AND $status::text IS NULL OR EXISTS (
    SELECT 1 FROM outbox_deliveries d WHERE d.tenant_id = m.tenant_id AND d.message_id = m.id
      AND ($endpoint_id::text IS NULL OR d.endpoint_id = $endpoint_id) AND ($status::text IS NULL OR d.status = $status)))
ORDER BY m.id DESC LIMIT $limit`,
);

export interface DeliveryListParams extends Record<string, unknown> {
  before_id: string | null;
  tenant_id: string | null;
  endpoint_id: string | null;
  status: string | null;
  event_type: string | null;
  resource_id: string | null;
  since: Date | null;
  until: Date | null;
  message_id: string | null;
  limit: number;
}

/**
 * Deliveries, newest first, with their message's type and resource id and the last attempt's duration.
 * `source` is where the ids come from: every delivery record, or (for the statuses that keep a queue
 * row) the queue.
 */
const deliveriesFrom = (source: string, extra: string) => `
SELECT d.id::int8 AS id, d.message_id, d.endpoint_id, coalesce(d.url, e.url) AS url, d.status, d.attempts,
  CASE WHEN d.status IN ('pending', 'sending') THEN d.next_attempt_at END AS next_attempt_at,
  d.last_status_code, d.last_error, d.last_attempt_at, d.created_at, d.completed_at,
  m.event_type, m.resource_id, m.erased_at, e.event_id AS event_id_mode,
  (SELECT a.duration_ms FROM outbox_attempts a WHERE a.delivery_id = d.id ORDER BY a.id DESC LIMIT 1) AS last_duration_ms
FROM ${source}
-- The message by its whole key (LIMIT: a lookup per delivery, never a join driven by the tenant alone).
CROSS JOIN LATERAL (SELECT m.event_type, m.resource_id, m.erased_at FROM outbox_messages m WHERE m.tenant_id = d.tenant_id AND m.id = d.message_id LIMIT 1) m
JOIN endpoints e ON e.id = d.endpoint_id
WHERE ($before_id::bigint IS NULL OR d.id < $before_id)
  AND ($endpoint_id::text IS NULL OR d.endpoint_id = $endpoint_id)
  AND ($tenant_id::text IS NULL OR d.tenant_id = $tenant_id)
  AND ($status::text IS NULL OR d.status = $status)
  AND ($event_type::text IS NULL OR m.event_type = $event_type)
  AND ($resource_id::text IS NULL OR m.resource_id = $resource_id)
  AND ($since::timestamptz IS NULL OR d.created_at >= $since)
  AND ($until::timestamptz IS NULL OR d.created_at < $until)
  AND ($message_id::text IS NULL OR d.message_id = $message_id)${extra}
ORDER BY d.id DESC LIMIT $limit`;

export const listDeliveriesStatement = defineStatement<DeliveryListParams, DeliveryListRow>(
  'tekil_outbox_list_deliveries',
  deliveriesFrom('outbox_deliveries d', ''),
);

/**
 * The same list for a status that keeps a queue row (pending, sending, failed: migration 013), read
 * through the queue: no index of the delivery records names the status, so on a large history a rare
 * status would otherwise be found by reading the records newest first until the page is full. Failed
 * ones come from the queue's partial index on failed rows, in id order. Sent unnamed, as the other
 * list, so each call is planned with its values.
 */
export const listQueuedDeliveriesStatement = defineStatement<DeliveryListParams & { failed: boolean }, DeliveryListRow>(
  'tekil_outbox_list_queued_deliveries',
  deliveriesFrom(
    'outbox_queue q JOIN outbox_deliveries d ON d.tenant_id = q.tenant_id AND d.id = q.delivery_id',
    `
  AND q.failed = $failed AND ($before_id::bigint IS NULL OR q.delivery_id < $before_id)`,
  ).replace('ORDER BY d.id DESC', 'ORDER BY q.delivery_id DESC'),
);

export const selectMessage = defineStatement<
  { id: string },
  {
    id: string;
    tenant_id: string;
    event_type: string;
    resource_id: string | null;
    idempotency_key: string | null;
    created_at: Date;
    payload: Uint8Array;
    trimmed_at: Date | null;
    erased_at: Date | null;
  }
>(
  'tekil_outbox_select_message',
  'SELECT id, tenant_id, event_type, resource_id, idempotency_key, created_at, payload, trimmed_at, erased_at FROM outbox_messages WHERE id = $id',
);

/** The attempts of the given deliveries, in order. */
export const selectAttempts = defineStatement<{ deliveryIds: number[] }, AttemptRow>(
  'tekil_outbox_select_attempts',
  `
SELECT id::int8 AS id, delivery_id::int8 AS delivery_id, attempt, url, started_at, duration_ms, succeeded, status_code, error, response_body
FROM outbox_attempts WHERE delivery_id = ANY ($deliveryIds::bigint[]) ORDER BY delivery_id, attempt, id`,
);

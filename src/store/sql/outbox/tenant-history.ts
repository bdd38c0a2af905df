import { defineStatement } from '../statement.js';
import type { DeliveryListParams, DeliveryListRow, MessageListParams, MessageListRow } from './history.js';

/**
 * One tenant's deliveries, newest first: the portal's Webhooks page and `GET /api/v1/deliveries?tenant_id=`.
 *
 * The page's ids come from the delivery key, (tenant_id, id) (migration 025), read backwards from the
 * cursor: without a filter on the delivery's own columns an index-only scan that stops after one page,
 * whatever the size of the history; with a message id, the fan-out's key (tenant_id, message_id, …).
 * The delivery rows, their messages and last attempts are then read for the page's rows only.
 *
 * Filters on a delivery's status and on its message's type or resource are checked row by row along the
 * tenant's key: adding status to an index would make every completion's update leave the heap-only path
 * (docs/performance.md). Sent unnamed, planned with its values, so unused filters fold away.
 */
export const listTenantDeliveriesStatement = defineStatement<DeliveryListParams & { tenant_id: string }, DeliveryListRow>(
  'tekil_outbox_list_tenant_deliveries',
  `
WITH page AS (
  SELECT d.id FROM outbox_deliveries d
  WHERE d.tenant_id = $tenant_id
    AND ($before_id::bigint IS NULL OR d.id < $before_id)
    AND ($endpoint_id::text IS NULL OR d.endpoint_id = $endpoint_id)
    AND ($status::text IS NULL OR d.status = $status)
    AND ($since::timestamptz IS NULL OR d.created_at >= $since)
    AND ($until::timestamptz IS NULL OR d.created_at < $until)
    AND ($message_id::text IS NULL OR d.message_id = $message_id)
    AND ($event_type::text IS NULL AND $resource_id::text IS NULL OR EXISTS (
      SELECT 1 FROM outbox_messages m WHERE m.tenant_id = d.tenant_id AND m.id = d.message_id
        AND ($event_type::text IS NULL OR m.event_type = $event_type)
        AND ($resource_id::text IS NULL OR m.resource_id = $resource_id)))
  ORDER BY d.tenant_id DESC, d.id DESC LIMIT $limit
)
SELECT d.id::int8 AS id, d.message_id, d.endpoint_id, coalesce(d.url, e.url) AS url, d.status, d.attempts,
  CASE WHEN d.status IN ('pending', 'sending') THEN d.next_attempt_at END AS next_attempt_at,
  d.last_status_code, d.last_error, d.last_attempt_at, d.created_at, d.completed_at,
  m.event_type, m.resource_id, e.event_id AS event_id_mode,
  (SELECT a.duration_ms FROM outbox_attempts a WHERE a.delivery_id = d.id ORDER BY a.id DESC LIMIT 1) AS last_duration_ms
FROM page
JOIN outbox_deliveries d ON d.tenant_id = $tenant_id AND d.id = page.id
CROSS JOIN LATERAL (SELECT m.event_type, m.resource_id FROM outbox_messages m WHERE m.tenant_id = d.tenant_id AND m.id = d.message_id LIMIT 1) m
JOIN endpoints e ON e.id = d.endpoint_id
ORDER BY d.id DESC`,
);

/**
 * One tenant's messages, newest first (`GET /api/v1/messages?tenant_id=`): the page's ids are chosen
 * from the message key (tenant_id, id) first — without a type, resource or time filter an
 * index-only scan that stops after one page, with one an index scan that stops as soon as the page is
 * full — and only the page's rows are then read with their delivery counts. (Left to choose, the
 * planner read every message of the tenant and sorted them.)
 */
export const listTenantMessagesStatement = defineStatement<MessageListParams & { tenant_id: string }, MessageListRow>(
  'tekil_outbox_list_tenant_messages',
  `
WITH page AS (
  SELECT m.id FROM outbox_messages m
  WHERE m.tenant_id = $tenant_id
    AND ($before_id::text IS NULL OR m.id < $before_id)
    AND ($event_type::text IS NULL OR m.event_type = $event_type)
    AND ($resource_id::text IS NULL OR m.resource_id = $resource_id)
    AND ($since::timestamptz IS NULL OR m.created_at >= $since)
    AND ($until::timestamptz IS NULL OR m.created_at < $until)
    AND ($endpoint_id::text IS NULL AND $status::text IS NULL OR EXISTS (
      SELECT 1 FROM outbox_deliveries d WHERE d.tenant_id = m.tenant_id AND d.message_id = m.id
        AND ($endpoint_id::text IS NULL OR d.endpoint_id = $endpoint_id) AND ($status::text IS NULL OR d.status = $status)))
  ORDER BY m.tenant_id DESC, m.id DESC LIMIT $limit
)
SELECT m.id, m.tenant_id, m.event_type, m.resource_id, m.created_at,
  coalesce((SELECT jsonb_object_agg(s.status, s.n) FROM
    (SELECT status, count(*) AS n FROM outbox_deliveries WHERE tenant_id = m.tenant_id AND message_id = m.id GROUP BY status) s), '{}'::jsonb) AS deliveries
FROM page JOIN outbox_messages m ON m.tenant_id = $tenant_id AND m.id = page.id
ORDER BY m.id DESC`,
);

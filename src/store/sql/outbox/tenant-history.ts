import { defineStatement } from '../statement.js';
import type { DeliveryListParams, DeliveryListRow, MessageListParams, MessageListRow } from './history.js';

/**
 * One tenant's deliveries, newest first: the portal's Webhooks page, `GET /api/v1/deliveries?tenant_id=`
 * and every open event stream's poll.
 *
 * The page's ids come from the delivery key, (tenant_id, id) (migration 025), read backwards from the
 * cursor by tekil_outbox_tenant_delivery_page (migration 030): one page of the key whatever the table's
 * statistics say, none at all included (left to its estimates, the planner read a tenant's whole
 * history for a page of 200 on tables never analyzed, and walked other tenants' newer rows with them).
 * With a message id the page comes from the fan-out's key (tenant_id, message_id, …) instead (a
 * message's few deliveries, sorted). With an endpoint id the function walks the endpoint's key
 * (endpoint_id, id) instead of the tenant's.
 *
 * Filters on a delivery's status and on its message's type or resource are checked row by row along the
 * tenant's key: adding status to an index would make every completion's update leave the heap-only path
 * (docs/performance.md). The delivery rows, their messages, endpoints and last attempts are then looked
 * up by key for the page's ids only (LATERAL … LIMIT 1: a lookup per id, never a join that could be
 * planned as a read of the tenant's history). Sent unnamed, planned with its values.
 */
export const listTenantDeliveriesStatement = defineStatement<DeliveryListParams & { tenant_id: string }, DeliveryListRow>(
  'tekil_outbox_list_tenant_deliveries',
  `
WITH page AS (
  SELECT p.id FROM tekil_outbox_tenant_delivery_page($tenant_id, $before_id::bigint, $endpoint_id::text, $status::text, $since::timestamptz,
    $until::timestamptz, $event_type::text, $resource_id::text, $limit::int) p
  WHERE $message_id::text IS NULL
  UNION ALL
  SELECT * FROM (
    SELECT d.id FROM outbox_deliveries d
    WHERE $message_id::text IS NOT NULL AND d.tenant_id = $tenant_id AND d.message_id = $message_id
      AND ($before_id::bigint IS NULL OR d.id < $before_id)
      AND ($endpoint_id::text IS NULL OR d.endpoint_id = $endpoint_id)
      AND ($status::text IS NULL OR d.status = $status)
      AND ($since::timestamptz IS NULL OR d.created_at >= $since)
      AND ($until::timestamptz IS NULL OR d.created_at < $until)
      AND ($event_type::text IS NULL AND $resource_id::text IS NULL OR EXISTS (
        SELECT 1 FROM outbox_messages m WHERE m.tenant_id = d.tenant_id AND m.id = d.message_id
          AND ($event_type::text IS NULL OR m.event_type = $event_type)
          AND ($resource_id::text IS NULL OR m.resource_id = $resource_id)))
    ORDER BY d.id DESC LIMIT $limit) one_message
)
SELECT d.id::int8 AS id, d.message_id, d.endpoint_id, coalesce(d.url, e.url) AS url, d.status, d.attempts,
  CASE WHEN d.status IN ('pending', 'sending') THEN d.next_attempt_at END AS next_attempt_at,
  d.last_status_code, d.last_error, d.last_attempt_at, d.created_at, d.completed_at,
  m.event_type, m.resource_id, m.erased_at, e.event_id AS event_id_mode,
  (SELECT a.duration_ms FROM outbox_attempts a WHERE a.delivery_id = d.id ORDER BY a.id DESC LIMIT 1) AS last_duration_ms
FROM page
CROSS JOIN LATERAL (SELECT d.* FROM outbox_deliveries d WHERE d.tenant_id = $tenant_id AND d.id = page.id LIMIT 1) d
CROSS JOIN LATERAL (SELECT m.event_type, m.resource_id, m.erased_at FROM outbox_messages m WHERE m.tenant_id = d.tenant_id AND m.id = d.message_id LIMIT 1) m
CROSS JOIN LATERAL (SELECT e.url, e.event_id FROM endpoints e WHERE e.id = d.endpoint_id LIMIT 1) e
ORDER BY d.id DESC`,
);

/**
 * One tenant's messages, newest first (`GET /api/v1/messages?tenant_id=`): the page's ids come from the
 * message key (tenant_id, id) read backwards by tekil_outbox_tenant_message_page (migration 030), one
 * page whatever the statistics, and only the page's rows are then read with their delivery counts.
 * (Left to choose, the planner read every message of the tenant and sorted them.)
 */
export const listTenantMessagesStatement = defineStatement<MessageListParams & { tenant_id: string }, MessageListRow>(
  'tekil_outbox_list_tenant_messages',
  `
SELECT m.id, m.tenant_id, m.event_type, m.resource_id, m.created_at,
  coalesce((SELECT jsonb_object_agg(s.status, s.n) FROM
    (SELECT status, count(*) AS n FROM outbox_deliveries WHERE tenant_id = m.tenant_id AND message_id = m.id GROUP BY status) s), '{}'::jsonb) AS deliveries
FROM tekil_outbox_tenant_message_page($tenant_id, $before_id::text, $event_type::text, $resource_id::text, $since::timestamptz,
  $until::timestamptz, $endpoint_id::text, $status::text, $limit::int) page
CROSS JOIN LATERAL (SELECT m.* FROM outbox_messages m WHERE m.tenant_id = $tenant_id AND m.id = page.id LIMIT 1) m
ORDER BY m.id DESC`,
);

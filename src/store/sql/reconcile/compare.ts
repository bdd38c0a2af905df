import { defineStatement } from '../statement.js';

/** What tekil holds of one delivery, as reconcile compares it with the provider. */
export interface RecordedDelivery {
  event_id: string;
  resource_id: string | null;
  event_type: string | null;
  status: string;
  occurred_at: Date | null;
}

/** Deliveries of a page's resources (generic adapter): one lookup per page. */
export const deliveriesOfResources = defineStatement<{ source: string; resourceIds: string[] }, RecordedDelivery>(
  'reconcile_deliveries_of_resources',
  `SELECT event_id, resource_id, event_type, status, occurred_at FROM inbox_deliveries
   WHERE resource_id = ANY($resourceIds::text[]) AND source = $source
   ORDER BY coalesce(occurred_at, received_at), received_at, event_id`,
);

/** The ordering guard's last applied state of a page's resources. */
export const resourceStates = defineStatement<{ source: string; resourceIds: string[] }, { resource_id: string; state: string | null }>(
  'reconcile_resource_states',
  `SELECT resource_id, state FROM resources WHERE source = $source AND resource_id = ANY($resourceIds::text[])`,
);

/** Deliveries by their ids (Stripe's events, GitHub's delivery guids): one lookup per page. */
export const deliveriesByIds = defineStatement<{ source: string; eventIds: string[] }, RecordedDelivery>(
  'reconcile_deliveries_by_ids',
  `SELECT event_id, resource_id, event_type, status, occurred_at FROM inbox_deliveries
   WHERE source = $source AND event_id = ANY($eventIds::text[])`,
);

/**
 * Done deliveries of a window with the given types: what tekil applied and the provider should know.
 * Reads by received time (the indexed column), then keeps the provider times inside the window.
 */
export const doneInWindow = defineStatement<{ source: string; types: string[] | null; windowStart: Date; windowEnd: Date | null }, RecordedDelivery>(
  'reconcile_done_in_window',
  `SELECT event_id, resource_id, event_type, status, occurred_at FROM inbox_deliveries
   WHERE source = $source AND status = 'done'
     AND ($types::text[] IS NULL OR event_type = ANY($types::text[]))
     AND received_at >= $windowStart
     AND coalesce(occurred_at, received_at) >= $windowStart
     AND ($windowEnd::timestamptz IS NULL OR coalesce(occurred_at, received_at) <= $windowEnd::timestamptz)`,
);

/**
 * The resources of a source with a delivery received in a window, in id order after a cursor: what
 * the PayTR and iyzico adapters read back one by one (those providers list nothing).
 */
export const resourcesInWindow = defineStatement<
  { source: string; windowStart: Date; windowEnd: Date | null; after: string | null; limit: number },
  { resource_id: string }
>(
  'reconcile_resources_in_window',
  `SELECT DISTINCT resource_id FROM inbox_deliveries
   WHERE source = $source AND resource_id IS NOT NULL
     AND received_at >= $windowStart
     AND ($windowEnd::timestamptz IS NULL OR received_at <= $windowEnd::timestamptz)
     AND ($after::text IS NULL OR resource_id > $after::text)
   ORDER BY resource_id
   LIMIT $limit`,
);

/** Deliveries of a page's resources with their bodies, to read the status each notified. */
export const deliveryBodiesOfResources = defineStatement<
  { source: string; resourceIds: string[] },
  RecordedDelivery & { body: Uint8Array; headers: Record<string, string> }
>(
  'reconcile_delivery_bodies_of_resources',
  `SELECT event_id, resource_id, event_type, status, occurred_at, body, headers FROM inbox_deliveries
   WHERE resource_id = ANY($resourceIds::text[]) AND source = $source
   ORDER BY coalesce(occurred_at, received_at), received_at, event_id`,
);

import { LIST_COLUMNS, WITH_QUEUE } from '../inbox/admin.js';

/**
 * Every delivery of one resource (of one source, or of every source when `$2` is null), in the order
 * the worker applies them: provider time (received time when the provider gives none), then received
 * time, then event id — the queue's own order (inbox_queue.provider_at). Found through the
 * inbox_deliveries_resource index; `$3` caps the rows.
 */
export const RESOURCE_TIMELINE_SQL = `SELECT ${LIST_COLUMNS}, coalesce(d.occurred_at, d.received_at) AS provider_at
  FROM ${WITH_QUEUE}
  WHERE d.resource_id = $1 AND ($2::text IS NULL OR d.source = $2)
  ORDER BY coalesce(d.occurred_at, d.received_at), d.received_at, d.event_id
  LIMIT $3`;

/** The state the ordering guard compares the resource's next event against, per source. */
export const RESOURCE_STATES_SQL = `SELECT source, state, rank, occurred_at, event_id, updated_at FROM resources
  WHERE resource_id = $1 AND ($2::text IS NULL OR source = $2) ORDER BY source`;

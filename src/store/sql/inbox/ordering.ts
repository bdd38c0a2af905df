/** The resource's current state, as the ordering guard compares an event against it. */
export const READ_RESOURCE_SQL = 'SELECT state, rank, occurred_at, event_id FROM resources WHERE source = $1 AND resource_id = $2';

/**
 * Records an applied event as its resource's current state. An event without a state (a status the
 * source does not list) keeps the resource's state and rank; the provider time only moves forward.
 */
export const APPLY_RESOURCE_SQL = `
INSERT INTO resources (source, resource_id, state, rank, occurred_at, event_id)
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (source, resource_id) DO UPDATE SET
  state = coalesce(EXCLUDED.state, resources.state),
  rank = CASE WHEN EXCLUDED.state IS NULL THEN resources.rank ELSE EXCLUDED.rank END,
  occurred_at = greatest(EXCLUDED.occurred_at, resources.occurred_at),
  event_id = EXCLUDED.event_id,
  updated_at = now()`;

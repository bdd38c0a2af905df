import { defineStatement } from '../statement.js';

/** A resource's current state, as the ordering guard compares an event against it. */
export interface ResourceStateRow {
  state: string | null;
  rank: number | null;
  occurred_at: Date | null;
  event_id: string;
}

export const readResource = defineStatement<{ source: string; resourceId: string }, ResourceStateRow>(
  'tekil_read_resource',
  'SELECT state, rank, occurred_at, event_id FROM resources WHERE source = $source AND resource_id = $resourceId',
);

/**
 * Records an applied event as its resource's current state. An event without a state (a status the
 * source does not list) keeps the resource's state and rank; the provider time only moves forward.
 */
export const applyResource = defineStatement<
  { source: string; resourceId: string; state: string | null; rank: number | null; occurredAt: Date | null; eventId: string },
  never
>(
  'tekil_apply_resource',
  `
INSERT INTO resources (source, resource_id, state, rank, occurred_at, event_id)
VALUES ($source, $resourceId, $state, $rank, $occurredAt, $eventId)
ON CONFLICT (source, resource_id) DO UPDATE SET
  state = coalesce(EXCLUDED.state, resources.state),
  rank = CASE WHEN EXCLUDED.state IS NULL THEN resources.rank ELSE EXCLUDED.rank END,
  occurred_at = greatest(EXCLUDED.occurred_at, resources.occurred_at),
  event_id = EXCLUDED.event_id,
  updated_at = now()`,
);

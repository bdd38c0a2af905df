import { defineStatement } from '../statement.js';

/** The state the ordering guard compares the resource's next event against, per source (all sources when `$source` is null). */
export const resourceStates = defineStatement<
  { resourceId: string; source: string | null },
  { source: string; state: string | null; rank: number | null; occurred_at: Date | null; event_id: string; updated_at: Date }
>(
  'dashboard_resource_states',
  `SELECT source, state, rank, occurred_at, event_id, updated_at FROM resources
  WHERE resource_id = $resourceId AND ($source::text IS NULL OR source = $source) ORDER BY source`,
);

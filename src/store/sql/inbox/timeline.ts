import { defineStatement } from '../statement.js';
import type { ResourceStateRow } from './ordering.js';

/** A resource's state from one source, with the source and when it last changed. */
export interface SourceResourceStateRow extends ResourceStateRow {
  source: string;
  updated_at: Date;
}

/** The state the ordering guard compares the resource's next event against, per source (all sources when `$source` is null). */
export const resourceStates = defineStatement<{ resourceId: string; source: string | null }, SourceResourceStateRow>(
  'dashboard_resource_states',
  `SELECT source, state, rank, occurred_at, event_id, updated_at FROM resources
  WHERE resource_id = $resourceId AND ($source::text IS NULL OR source = $source) ORDER BY source`,
);

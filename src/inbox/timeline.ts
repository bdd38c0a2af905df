import type { Queryable } from '../store/db.js';
import { resourceStates, type SourceResourceStateRow } from '../store/sql/inbox/timeline.js';
import { resourceTimeline as resourceTimelineStatement } from '../store/sql/inbox/admin.js';
import type { InboxListItem } from './list.js';

/** More events than one resource ever gets in practice; past it the answer says `truncated`. */
export const TIMELINE_LIMIT = 1000;

export interface TimelineEvent extends InboxListItem {
  /** The time the worker orders by: the provider's, else the received time. */
  provider_at: Date;
  /** `applied` (done), `stale` (skipped by the ordering guard), or the status while not settled. */
  verdict: string;
  /** Why: the ordering guard's reason for a stale event, the last error of a dead one. */
  reason: string | null;
}

/** What the ordering guard holds for a resource from one source; `event_id` is the event applied last. */
export type ResourceState = SourceResourceStateRow;

export interface ResourceTimeline {
  resource_id: string;
  /** What the ordering guard holds for the resource now, per source (none before an event is applied). */
  current: ResourceState[];
  events: TimelineEvent[];
  truncated: boolean;
}

/** Every event of one resource in provider order, each applied or stale (and why) or still open. */
export async function resourceTimeline(db: Queryable, resourceId: string, source: string | undefined): Promise<ResourceTimeline> {
  const rows = await resourceTimelineStatement.run(db, { resourceId, source: source ?? null, limit: TIMELINE_LIMIT + 1 });
  const states = await resourceStates.run(db, { resourceId, source: source ?? null });
  const events = rows.rows.slice(0, TIMELINE_LIMIT).map((row) => ({
    ...row,
    verdict: row.status === 'done' ? 'applied' : row.status,
    reason: row.status === 'stale' || row.status === 'dead' ? row.last_error : null,
  }));
  return { resource_id: resourceId, current: states.rows, events, truncated: rows.rows.length > TIMELINE_LIMIT };
}

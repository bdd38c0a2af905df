import type { FilterShape, InboxFilterParams } from '../store/sql/inbox/admin.js';

/** The statuses an operator sees (`processing` is a pending delivery under a live lease). */
export const inboxStatuses = ['pending', 'processing', 'done', 'stale', 'dead', 'discarded'] as const;

export type InboxListStatus = (typeof inboxStatuses)[number];

/** What an operator filters the inbox by (review queue = `status: 'dead'`). */
export interface InboxFilter {
  status?: InboxListStatus | undefined;
  source?: string | undefined;
  type?: string | undefined;
  resourceId?: string | undefined;
  /** The provider's delivery id. */
  eventId?: string | undefined;
  /** Deliveries with at least this many attempts. */
  minAttempts?: number | undefined;
  /** received_at ≥ since */
  since?: Date | undefined;
  /** received_at < until */
  until?: Date | undefined;
}

/** Lists of these statuses start from the small queue table: every such delivery has a queue row. */
export function queuedOnly(status: string | undefined): boolean {
  return status === 'pending' || status === 'processing' || status === 'dead';
}

/** A filter as the inbox statements take it: every field named, null where it does not filter. */
export function filterParams(filter: InboxFilter): InboxFilterParams {
  return {
    status: filter.status ?? null,
    source: filter.source ?? null,
    type: filter.type ?? null,
    resourceId: filter.resourceId ?? null,
    eventId: filter.eventId ?? null,
    minAttempts: filter.minAttempts ?? null,
    since: filter.since ?? null,
    until: filter.until ?? null,
  };
}

/** Which statement of a family serves the filter (see FilterShape). */
export function filterShape(filter: InboxFilter): FilterShape {
  return { queued: queuedOnly(filter.status), acrossSources: filter.eventId !== undefined && !filter.source };
}

import type { Queryable } from '../store/db.js';
import type { InboxDeliveryRow } from '../store/sql/inbox/insert-deliveries.js';
import type { FindingKind } from '../store/sql/reconcile/findings.js';

/** The provider changes a run looks at: from `start` up to `end` (up to the run's start when null). */
export interface ReconcileWindow {
  start: Date;
  end: Date | null;
}

/** One difference an adapter found, and what `--apply` would do about it. */
export interface PlannedFinding {
  kind: FindingKind;
  resourceId: string | null;
  eventId: string | null;
  providerState: string | null;
  tekilState: string | null;
  detail: string | null;
  /** With --apply: the delivery to record (a missing event, or a synthetic one for a state). */
  record?: InboxDeliveryRow;
  /** With --apply: ask the provider to deliver the webhook again (GitHub). */
  redeliver?: () => Promise<void>;
}

/** One page of the provider's listing, compared with the store. */
export interface ComparedPage {
  /** Items the provider listed on this page. */
  count: number;
  /** Where the next page starts; null when this was the last one. */
  nextCursor: string | null;
  findings: PlannedFinding[];
}

/**
 * One provider's side of a run. An adapter is made per run and may keep what it has seen across pages
 * (`extras` needs the whole listing).
 */
export interface ReconcileAdapter {
  readonly provider: string;
  /** Lists the page at `cursor` (null: the first) and compares it with what the store holds. */
  comparePage(db: Queryable, window: ReconcileWindow, cursor: string | null): Promise<ComparedPage>;
  /**
   * After a listing that started at the first page: what tekil applied in the window that the provider
   * did not list (`extra`). `listedUntil` closes an open window: nothing after the listing began.
   */
  extras?(db: Queryable, window: ReconcileWindow, listedUntil: Date): Promise<PlannedFinding[]>;
}

/** Run ids are bigints: kept as text in TypeScript. */
export type RunId = string;

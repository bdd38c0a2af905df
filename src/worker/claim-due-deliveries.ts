import type { Db } from '../store/db.js';
import { claimStatement, type InboxClaimRow } from '../store/sql/inbox/claim-due-deliveries.js';

export interface InboxClaimedDelivery {
  source: string;
  event_id: string;
  resource_id: string | null;
  event_type: string | null;
  occurred_at: Date | null;
  received_at: Date;
  body: Buffer | Uint8Array;
  content_type: string | null;
  headers: Record<string, string>;
  /** Counting this attempt. */
  attempts: number;
  guard_bypass: boolean;
  /** The previous holder's lease had expired: that attempt was lost (recorded by the claim). */
  was_lost: boolean;
  /** Where the claimed queue row version is: the completion finds it without an index lookup. */
  row_ref: string;
  /** Where the delivery record is (its ctid), for the same reason. */
  record_ref: string;
}

/** One claim's deliveries, and the source the next claim's round robin starts after. */
export interface InboxClaim {
  rows: InboxClaimedDelivery[];
  nextAfter: string;
}

export interface ClaimOptions {
  limit: number;
  leaseMs: number;
  token: string;
  /** The source the previous claim ended on ('' at first): this claim starts at the source after it. */
  after?: string;
  /** The most deliveries a source may give this claim (its free forwarding slots); a source not named may give the whole batch. */
  caps?: ReadonlyMap<string, number>;
}

/** Why a delivery's previous attempt is recorded as lost. */
export const LOST_ERROR = 'lease expired: the worker did not finish (crashed, killed or lost its connection)';

/**
 * Claims up to `limit` due deliveries, going round the sources with due work from after `after` (the
 * statement, and why it is shaped so, is in src/store/sql/inbox/claim-due-deliveries.ts). The claim is
 * one statement sent on its own, so it is its own transaction: one round trip, no BEGIN/COMMIT. It
 * commits without waiting for its WAL flush (`synchronous_commit` off, set by the statement itself for
 * this transaction only): a claim lost in a server crash only means the delivery is unclaimed again,
 * and the batch's own commit (synchronous) flushes the claim's WAL record before its own, so an effect
 * never outlives its claim. Answers the claimed rows in provider-time order.
 */
export async function claimDueDeliveries(db: Db, options: ClaimOptions): Promise<InboxClaim> {
  const stmt = claimStatement(options.limit);
  const capped: string[] = [];
  const caps: number[] = [];
  for (const [source, cap] of options.caps ?? []) {
    capped.push(source);
    caps.push(cap);
  }
  const after = options.after ?? '';
  const res = await stmt.run(db, { lease_ms: options.leaseMs, token: options.token, lost_error: LOST_ERROR, after, capped, caps });
  // The next claim starts after the last source this one reached (the walk's order is `pos`).
  let last: InboxClaimRow | undefined;
  for (const r of res.rows) if (!last || r.pos > last.pos) last = r;
  const rows = res.rows.map(toDelivery).sort((a, b) => providerTime(a) - providerTime(b) || a.received_at.getTime() - b.received_at.getTime());
  return { rows, nextAfter: last ? last.source : after };
}

/** Times travel as epoch milliseconds (float8): cheaper to print and read than timestamp text. */
function toDelivery(r: InboxClaimRow): InboxClaimedDelivery {
  // A literal with every field, not a spread: the hot path reads these objects many times per batch.
  return {
    source: r.source,
    event_id: r.event_id,
    resource_id: r.resource_id,
    event_type: r.event_type,
    occurred_at: r.occurred_ms === null ? null : new Date(r.occurred_ms),
    received_at: new Date(r.received_ms),
    body: r.body,
    content_type: r.content_type,
    headers: r.headers,
    attempts: r.attempts,
    guard_bypass: r.guard_bypass,
    was_lost: r.was_lost,
    row_ref: r.row_ref,
    record_ref: r.record_ref,
  };
}

function providerTime(d: InboxClaimedDelivery): number {
  return (d.occurred_at ?? d.received_at).getTime();
}

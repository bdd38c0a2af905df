import { defineStatement, type Statement } from '../statement.js';

/**
 * Claims up to `limit` due deliveries for one batch (claimDueDeliveries sends it): on each queue row
 * attempts + 1, a lease until `locked_until`, `locked_by` = the batch token. The update touches no
 * indexed column of inbox_queue, so it is written as a HOT update. The delivery record is only read
 * (body, headers), by its primary key; nothing but the batch's completion writes it until then, so
 * the completion finds it by the ctid read here.
 *
 * Fair across sources: the claim goes round the sources with queued rows (`walk`, a loose index scan of
 * inbox_queue_source_due, one probe per source), starting after $after (the source the previous claim
 * ended on) and wrapping round to it, and takes each source's due rows in time order until the batch is
 * full. A source with 100,000 due deliveries fills the claims it is reached in, but the next claim
 * starts at the source after it: another source's new delivery is in the next claim, not behind the
 * backlog. Everything here is lazy under the final LIMIT: a source the claim does not reach is never
 * read, so a claim costs one probe per source it passes plus the rows it takes.
 *
 * A source may give at most its cap (`$capped` / `$caps`, the free forwarding slots of a source that
 * forwards, see src/worker/forward-slots.ts); the others at most the batch.
 *
 * A delivery whose lease expired (its worker died) is due again and is claimed like any other; the
 * claim records the lost attempt in `inbox_attempt_history` in the same statement.
 *
 * One delivery per resource at a time, in provider time: a delivery is not claimed while another
 * queued delivery of its resource holds a live lease, or is earlier in (provider_at, received_at,
 * event_id). This holds under concurrent claimers because the rule reads rows, not locks: a row
 * another claimer has just locked (claim not yet committed) still reads as unleased, so when it is
 * earlier it keeps blocking its resource's later deliveries, and SKIP LOCKED keeps it from being
 * taken twice. Within one statement the earlier row also reads as unclaimed, so one batch never
 * holds two deliveries of one resource. Dead (parked) deliveries block nothing.
 *
 * Plans that do not depend on statistics (the queue is empty most of its life, and a Postgres with
 * autovacuum off never analyzes it): each scan of the queue is an ORDER BY … LIMIT that its index
 * serves in order, and the resource rule names `source` only through an expression, so the one index
 * it can use is the resource's (a probe of the source's index would read the source's whole backlog
 * per candidate). test/worker-claim-plans.test.ts checks the generic plan on tables never analyzed.
 */
function claimText(limit: number): string {
  return `
WITH RECURSIVE walk (source, pos, wrapped) AS (
  SELECT $after::text, 0, false
  UNION ALL
  SELECT nxt.source, w.pos + 1, nxt.wrapped
  FROM walk w CROSS JOIN LATERAL (
    -- The next source in the index; past its end, the first one again, up to $after.
    -- (An Append under LIMIT 1 runs its second branch only when the first finds nothing.)
    (SELECT s.source, w.wrapped AS wrapped FROM inbox_queue s
     WHERE NOT s.dead AND s.source > w.source AND (NOT w.wrapped OR s.source <= $after::text)
     ORDER BY s.source LIMIT 1)
    UNION ALL
    (SELECT s.source, true FROM inbox_queue s
     WHERE NOT w.wrapped AND NOT s.dead AND s.source <= $after::text
     ORDER BY s.source LIMIT 1)
    LIMIT 1
  ) nxt
), candidates AS (
  SELECT c.row_ctid, c.source, c.event_id, c.prev_locked_by, c.prev_claimed_at, c.prev_attempts, w.pos
  FROM walk w CROSS JOIN LATERAL (
    SELECT q.ctid AS row_ctid, q.source, q.event_id, q.locked_by AS prev_locked_by, q.claimed_at AS prev_claimed_at, q.attempts AS prev_attempts
    FROM inbox_queue q
    WHERE q.source = w.source AND NOT q.dead AND q.next_attempt_at <= now()
      -- Evaluated once (an init plan): this statement is its own transaction, see claimDueDeliveries.
      AND (SELECT set_config('synchronous_commit', 'off', true)) = 'off'
      AND (q.locked_until IS NULL OR q.locked_until < now())
      AND (q.resource_id IS NULL OR NOT EXISTS (
        SELECT 1 FROM inbox_queue o
        WHERE o.resource_id = q.resource_id AND o.source || '' = q.source AND NOT o.dead AND o.event_id <> q.event_id
          AND (o.locked_until >= now()
               OR (o.provider_at, o.received_at, o.event_id) < (q.provider_at, q.received_at, q.event_id))))
    ORDER BY q.next_attempt_at
    LIMIT least(${limit}, coalesce((SELECT c.cap FROM unnest($capped::text[], $caps::int[]) AS c (source, cap) WHERE c.source = w.source), ${limit}))
    FOR UPDATE SKIP LOCKED
  ) c
  WHERE w.pos > 0
  -- Walk order, as the rows come: the LIMIT stops the walk once the batch is full.
  LIMIT ${limit} -- a literal: the planner sizes the plan for it, also in the cached generic plan
), lost AS (
  INSERT INTO inbox_attempt_history (source, event_id, attempt, worker, started_at, finished_at, duration_ms, outcome, error)
  SELECT c.source, c.event_id, c.prev_attempts, c.prev_locked_by, coalesce(c.prev_claimed_at, now()), now(),
         (extract(epoch FROM now() - coalesce(c.prev_claimed_at, now())) * 1000)::int, 'lost', $lost_error
  FROM candidates c
  WHERE c.prev_locked_by IS NOT NULL
)
UPDATE inbox_queue q
SET attempts = q.attempts + 1, locked_by = $token, claimed_at = now(), locked_until = now() + $lease_ms * interval '1 millisecond'
FROM candidates c
  -- One primary-key lookup per claimed row, whatever the statistics say: LIMIT keeps the planner
  -- from turning this into a hash join over the whole table.
  CROSS JOIN LATERAL (
    SELECT d.resource_id, d.event_type, d.occurred_at, d.received_at, d.body, d.content_type, d.headers, d.ctid AS record_ctid
    FROM inbox_deliveries d
    WHERE d.source = c.source AND d.event_id = c.event_id
    LIMIT 1
  ) d
-- One TID scan of the whole array, hash-joined to the candidates: a TID scan repeated per candidate
-- (a nested loop) asks the kernel for the table's size on every repetition.
WHERE q.ctid = ANY (ARRAY(SELECT row_ctid FROM candidates)) AND q.ctid = c.row_ctid
RETURNING q.source, q.event_id, d.resource_id, d.event_type, date_part('epoch', d.occurred_at) * 1000 AS occurred_ms,
          date_part('epoch', d.received_at) * 1000 AS received_ms, d.body, d.content_type, d.headers,
          q.attempts, q.guard_bypass, c.prev_locked_by IS NOT NULL AS was_lost, q.ctid::text AS row_ref,
          d.record_ctid::text AS record_ref, c.pos`;
}

export type ClaimParams = {
  lease_ms: number;
  token: string;
  lost_error: string;
  /** Where the walk over sources starts (after this source); '' at first. */
  after: string;
  /** Sources whose share of this claim is capped, and their caps (same order). */
  capped: string[];
  caps: number[];
};

/** A claimed delivery as the statement answers it: times as epoch milliseconds (float8), cheaper to print and read than timestamp text. */
export interface InboxClaimRow {
  source: string;
  event_id: string;
  resource_id: string | null;
  event_type: string | null;
  occurred_ms: number | null;
  received_ms: number;
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
  /** The source's place in this claim's walk: the last one is where the next claim starts after. */
  pos: number;
}

const byLimit = new Map<number, Statement<ClaimParams, InboxClaimRow>>();

/**
 * The claim statement for a batch size: the one builder of this file. The limit is a literal in the
 * text (see above), so each size is its own statement, named after it.
 *
 * Planned on every run, with its values, on both stores: a plan kept from the queue's empty hours is
 * the trap. On a table never analyzed (autovacuum off, as on many CI images and on the embedded store)
 * the planner sizes it by its pages, at least ten: a generic plan made while the queue was empty
 * finds the claimed rows again by a sequential scan of the whole queue (cheaper than a TID scan over ten
 * pages), and Postgres keeps that plan as the queue grows to 100,000 rows, since nothing invalidates
 * it. Planned each time (about half a millisecond for a batch of 500), the plan follows the queue's
 * current size; the scans that choose rows are index-ordered whatever the size (see above).
 */
export function claimStatement(limit: number): Statement<ClaimParams, InboxClaimRow> {
  let stmt = byLimit.get(limit);
  if (!stmt) {
    stmt = defineStatement<ClaimParams, InboxClaimRow>(`tekil_claim_due_deliveries_${limit}`, claimText(limit), 'unprepared');
    byLimit.set(limit, stmt);
  }
  return stmt;
}

import type { Queryable } from '../../db.js';
import { defineStatement } from '../statement.js';

/**
 * Claims due deliveries. Per endpoint it takes no more than the endpoint's free in-flight slots, so a
 * dead endpoint's backlog cannot fill a batch; endpoint rows are locked (NO KEY UPDATE, which does not
 * block publishing) and skipped when another dispatcher is claiming them, which keeps the cap exact
 * across dispatchers.
 *
 * The queue row (migration 013) gets the lease's end and the delivery record its new status: two
 * heap-only updates, no index entry. A claim leaves the queue row's due time alone, so a leased row stays
 * at the front of its endpoint's due rows: the in-flight count reads the endpoint's earliest
 * `max_in_flight + limit` due rows, which hold every leased one (a row is claimed only after every
 * earlier due one). If this process dies, the row is due again once the lease runs out, and its record
 * is still `sending`: the attempt was abandoned.
 *
 * Gentle sending (migration 018): an endpoint with a rate limit is paced by its `next_send_at`, read
 * and moved on under the endpoint's row lock, so every dispatcher draws from the same budget. A claim
 * takes only the send times that fall within PACING_HORIZON of now (a later one stays pending, its
 * attempt count unchanged) and answers each delivery's wait before its request starts. An endpoint
 * whose breaker is open (`failed_attempts_in_row` at the threshold) gets one request at a time, and
 * none before its `probe_at`.
 */
/** A claimed delivery, with what its attempt needs of the message and the endpoint. */
export interface OutboxClaimRow {
  /** The delivery's tenant: with id, its key (migration 025); every later statement on it names both. */
  tenant_id: string;
  id: number;
  message_id: string;
  endpoint_id: string;
  /** The destination: the extra destination's URL, else the endpoint's. */
  url: string;
  /** This attempt's number (1 for the first). */
  attempt: number;
  ladder_base: number;
  previous_status: 'pending' | 'sending';
  /** When the abandoned attempt started; null unless previous_status is `sending`. */
  previous_attempt_at: Date | null;
  payload: Uint8Array;
  event_type: string;
  scheme: string;
  /** The `hmac` scheme's options as JSON text; null for the other schemes. */
  scheme_options_json: string | null;
  timeout_ms: number;
  /** The endpoint's ladder as JSON text. */
  ladder_json: string;
  /** The endpoint's updated_at in epoch milliseconds. */
  endpoint_updated_ms: number;
  consecutive_failures: number;
  /** Failed attempts in a row when claimed (the circuit breaker's count). */
  failed_attempts_in_row: number;
  /** Milliseconds to wait before the request starts: the endpoint's rate limit paces it. */
  wait_ms: number;
  /** When the request may start, on the database's clock, in epoch milliseconds (0 when not paced). */
  send_at_ms: number;
  /** The gap the endpoint's rate limit makes between two requests; null without one. */
  send_interval_ms: number | null;
  /** The publish span's traceparent (migration 022): the attempt's span is its child. Null when published untraced. */
  traceparent: string | null;
  /** The endpoint's event id mode (migration 020): `message` or `delivery`. */
  event_id_mode: string;
  /** The endpoint's recent p90 in ms when it is in the slow lane (migration 026), else null. */
  slow_p90_ms: number | null;
}

/** A row of the statement: a claimed delivery and the cursor, or (nothing claimed) the cursor alone. */
type ClaimStatementRow = (OutboxClaimRow | { [K in keyof OutboxClaimRow]: null }) & { next_after: string };

export const claimStatement = defineStatement<
  {
    limit: number;
    lease: string;
    lease_margin_ms: number;
    breaker_failures: number;
    pace_margin_ms: number;
    after_tenant: string;
    cursor_tenants: string[];
    cursor_after: string[];
    quantum: number;
    tenant_cap: number;
    slow_free: number;
  },
  ClaimStatementRow
>(
  'tekil_outbox_claim',
  `
-- The endpoints to claim from come from the queue, not from the endpoints table: with 20,000 tenants
-- of two endpoints each, starting from every enabled endpoint cost 40,000 probes a claim while a
-- handful had due rows (bench:tenants). \`walk\` is a loose index scan of outbox_queue_tenant_due
-- (tenant, endpoint): each step is one probe for the next endpoint id of the same tenant that has
-- unsettled rows, or, once the tenant has had its share, for the next tenant id and its first endpoint.
--
-- Round the tenants: the walk starts after $after_tenant (the last tenant this dispatcher claimed from,
-- '' at first), runs to the end of the index, then wraps around from its start up to $after_tenant, so a
-- tenant with a long backlog early in the id order cannot keep later tenants waiting. Each tenant's
-- share of a claim is its quota: $quantum rows times its weight, no more than its free requests in
-- flight (its cap less its requests claimed and not finished). So a tenant with a million due rows, or
-- with a thousand endpoints, takes a quantum a claim like any other, and a tenant at its cap none.
--
-- Round the endpoints inside a tenant: the tenant's walk starts after the endpoint this dispatcher last
-- claimed from in it ($cursor_tenants / $cursor_after, the few tenants it remembers; else its first)
-- and wraps around inside the tenant, so a tenant's quota goes round its endpoints across claims.
--
-- It stops once the endpoints it found may give $limit rows (counting each one's due rows up to 8 and
-- its cap; fewer when its in-flight slots are taken) or when it is back at $after_tenant, so a claim
-- costs about one step per claimed endpoint plus one per endpoint whose rows are not due, leased, paused
-- or waiting (a retry later, a disabled tenant, an open breaker, a paced endpoint), and one per tenant
-- at its cap: never one per endpoint or tenant that has nothing queued.
WITH RECURSIVE walk (tenant_id, endpoint_id, pos, wrapped, tstart, twrapped, tquota, tfound, found, qualifies) AS (
  SELECT $after_tenant::text, ''::text, 0, false, ''::text, false, 0, 0, 0, false
  UNION ALL
  SELECT nxt.tenant_id, nxt.endpoint_id, w.pos + 1, nxt.wrapped, nxt.tstart, nxt.twrapped, tq.tquota,
    CASE WHEN nxt.entered THEN 0 ELSE w.tfound END + take.n, w.found + take.n, take.n > 0
  FROM walk w CROSS JOIN LATERAL (
    SELECT * FROM (
      -- The tenant's next endpoint (after the last, up to where its walk started once wrapped).
      (SELECT q.tenant_id, q.endpoint_id, w.wrapped, w.tstart, w.twrapped, false AS entered FROM outbox_queue q
       WHERE w.tfound < w.tquota AND NOT q.failed AND q.tenant_id = w.tenant_id AND q.endpoint_id > w.endpoint_id
         AND (NOT w.twrapped OR q.endpoint_id <= w.tstart)
       ORDER BY q.tenant_id, q.endpoint_id LIMIT 1)
      UNION ALL
      -- Past the tenant's last endpoint: its first one again, up to where its walk started.
      (SELECT q.tenant_id, q.endpoint_id, w.wrapped, w.tstart, true, false FROM outbox_queue q
       WHERE w.tfound < w.tquota AND NOT w.twrapped AND w.tstart <> '' AND NOT q.failed AND q.tenant_id = w.tenant_id
         AND q.endpoint_id <= w.tstart
       ORDER BY q.tenant_id, q.endpoint_id LIMIT 1)
      UNION ALL
      -- The next tenant with unsettled rows (past the end, the first one again, up to $after_tenant), and
      -- its endpoint after this dispatcher's cursor in it, else its first.
      (SELECT nt.tenant_id, ne.endpoint_id, nt.wrapped, c.s, ne.twrapped, true FROM (
         (SELECT q.tenant_id, w.wrapped AS wrapped FROM outbox_queue q
          WHERE NOT q.failed AND q.tenant_id > w.tenant_id AND (NOT w.wrapped OR q.tenant_id <= $after_tenant::text)
          ORDER BY q.tenant_id LIMIT 1)
         UNION ALL
         (SELECT q.tenant_id, true FROM outbox_queue q
          WHERE NOT w.wrapped AND NOT q.failed AND q.tenant_id <= $after_tenant::text
          ORDER BY q.tenant_id LIMIT 1)
         LIMIT 1
       ) nt
       CROSS JOIN LATERAL (SELECT coalesce(($cursor_after::text[])[array_position($cursor_tenants::text[], nt.tenant_id)], '') AS s) c
       CROSS JOIN LATERAL (
         (SELECT q.endpoint_id, false AS twrapped FROM outbox_queue q
          WHERE NOT q.failed AND q.tenant_id = nt.tenant_id AND q.endpoint_id > c.s ORDER BY q.tenant_id, q.endpoint_id LIMIT 1)
         UNION ALL
         (SELECT q.endpoint_id, true FROM outbox_queue q
          WHERE NOT q.failed AND q.tenant_id = nt.tenant_id ORDER BY q.tenant_id, q.endpoint_id LIMIT 1)
         LIMIT 1
       ) ne)
      LIMIT 1
    ) n1
  ) nxt
  -- The tenant's quota, read when the walk enters it (one primary-key probe on each table): a disabled
  -- tenant's deliveries wait, as a disabled endpoint's do.
  CROSS JOIN LATERAL (
    SELECT CASE WHEN NOT nxt.entered THEN w.tquota ELSE coalesce((
      SELECT CASE WHEN t.disabled THEN 0 ELSE greatest(0, least($quantum::int * t.weight,
        coalesce(t.max_in_flight, nullif($tenant_cap::int, 0), 2147483647)::bigint
          - greatest(0, t.requests_claimed - coalesce((SELECT o.requests_done FROM outbox_tenant_done o WHERE o.tenant_id = t.id), 0))))::int END
      FROM tenants t WHERE t.id = nxt.tenant_id), 0) END AS tquota
  ) tq
  CROSS JOIN LATERAL (
    SELECT least(tq.tquota - CASE WHEN nxt.entered THEN 0 ELSE w.tfound END, coalesce((
        -- How many rows the endpoint may give this claim, at most: its due rows that are not leased (up
        -- to 8), no more than its cap; 0 when it may not be claimed from (or it is slow and the slow lane
        -- is full). Today's tests of an endpoint, read in this statement's snapshot; the endpoint row's
        -- own are checked again under its lock (eps).
        SELECT CASE WHEN e.enabled AND e.deleted_at IS NULL
          AND (e.slow_p90_ms IS NULL OR $slow_free::int > 0)
          AND (e.send_interval_ms IS NULL OR e.next_send_at IS NULL OR e.next_send_at <= now() + interval '1 second')
          AND ($breaker_failures::int = 0 OR e.probe_at IS NULL OR e.probe_at <= now())
          THEN (
            -- The endpoint's due rows that are not leased (up to 8, one probe of the due index), within
            -- its cap less those leased. Leased rows come first in its due order (a row is claimed only
            -- after every earlier due one), so an endpoint whose slots are all taken (a slow receiver
            -- holding its requests) gives 0 and is stepped over, not read again below. The leased ones
            -- are counted in its first min(cap, 64) + 8 due rows: a cap above 64 with that many leased
            -- is not judged full from them, only the cap's own rows can fill it.
            SELECT greatest(0, least(
              (SELECT count(*) FROM (SELECT 1 FROM outbox_queue q
                 WHERE q.tenant_id = nxt.tenant_id AND q.endpoint_id = e.id AND NOT q.failed AND q.next_attempt_at <= now()
                   AND (q.lease_until IS NULL OR q.lease_until <= now())
                 LIMIT 8) u),
              CASE WHEN $breaker_failures::int > 0 AND e.failed_attempts_in_row >= $breaker_failures::int THEN 1 ELSE e.max_in_flight END
                - count(*) FILTER (WHERE d.leased)))::int
            FROM (SELECT coalesce(q.lease_until > now(), false) AS leased FROM outbox_queue q
               WHERE q.tenant_id = nxt.tenant_id AND q.endpoint_id = e.id AND NOT q.failed AND q.next_attempt_at <= now()
               ORDER BY q.next_attempt_at
               LIMIT least(e.max_in_flight, 64) + 8) d)
          ELSE 0 END
        FROM endpoints e WHERE e.id = nxt.endpoint_id), 0)) AS n
  ) take
  WHERE w.found < $limit::int
), tenants_seen AS (
  -- Each tenant claimed from, and its free requests in flight as this statement's snapshot reads them.
  SELECT t.id, t.weight, coalesce(t.max_in_flight, nullif($tenant_cap::int, 0), 2147483647)::bigint
      - greatest(0, t.requests_claimed - coalesce((SELECT o.requests_done FROM outbox_tenant_done o WHERE o.tenant_id = t.id), 0)) AS headroom
  FROM (SELECT DISTINCT walk.tenant_id FROM walk WHERE walk.qualifies) w
  -- (LIMIT: a primary-key probe per tenant, never a join the planner could turn into a scan of every tenant.)
  CROSS JOIN LATERAL (SELECT t.id, t.weight, t.max_in_flight, t.requests_claimed FROM tenants t WHERE t.id = w.tenant_id AND NOT t.disabled LIMIT 1) t
), tenants_near AS (
  -- A tenant near its cap (less than two claims' worth free) is locked: another dispatcher claiming it
  -- meanwhile is skipped, as with an endpoint, and a locked row is read at its latest version, so its
  -- claimed count includes every claim committed before this one, whatever this statement's snapshot.
  -- Its share is read again there, exactly. (Far from its cap, claims of several dispatchers need not
  -- wait for each other: together they cannot take two claims' worth.)
  SELECT t.id, greatest(0, least($quantum::int * t.weight,
      coalesce(t.max_in_flight, nullif($tenant_cap::int, 0), 2147483647)::bigint
        - greatest(0, t.requests_claimed - coalesce((SELECT o.requests_done FROM outbox_tenant_done o WHERE o.tenant_id = t.id), 0)))) AS share
  FROM tenants_seen s
  CROSS JOIN LATERAL (
    SELECT t.id, t.weight, t.max_in_flight, t.requests_claimed FROM tenants t WHERE t.id = s.id AND NOT t.disabled
    FOR NO KEY UPDATE SKIP LOCKED
  ) t
  WHERE s.headroom < 2 * $limit::int
), tenants_locked AS (
  SELECT s.id, least($quantum::int * s.weight, s.headroom) AS share FROM tenants_seen s WHERE s.headroom >= 2 * $limit::int
  UNION ALL
  SELECT tenants_near.id, tenants_near.share FROM tenants_near
), eps AS (
  -- The gap between two send times: the limit's period shared by its count, plus the safety margin
  -- shared by the count too (sending.rate_limit_margin): that many requests then span the period and the
  -- margin, so a request up to the margin late still leaves every period within the limit.
  SELECT e.id, walk.pos, walk.tenant_id, tl.share, e.slow_p90_ms IS NOT NULL AS slow, e.timeout_ms, (e.send_interval_ms + $pace_margin_ms::double precision / split_part(e.rate_limit, '/', 1)::int) AS send_interval_ms, greatest(e.next_send_at, now()) AS send_base,
    -- An open breaker lets one probe through at a time.
    CASE WHEN $breaker_failures::int > 0 AND e.failed_attempts_in_row >= $breaker_failures::int THEN 1 ELSE e.max_in_flight END AS max_in_flight,
    -- Send times the rate limit has free within the horizon (1 s): this claim may take no more.
    CASE WHEN e.send_interval_ms IS NULL THEN $limit::int
      ELSE floor((extract(epoch FROM now() - greatest(e.next_send_at, now())) * 1000 + 1000) / (e.send_interval_ms + $pace_margin_ms::double precision / split_part(e.rate_limit, '/', 1)::int))::int + 1 END AS allowed
  FROM walk JOIN endpoints e ON e.id = walk.endpoint_id JOIN tenants_locked tl ON tl.id = walk.tenant_id
  WHERE walk.qualifies
    -- Checked again on the locked row: another dispatcher's claim may have moved its send time or a
    -- change disabled it since this statement's snapshot.
    AND e.enabled AND e.deleted_at IS NULL
    AND (e.send_interval_ms IS NULL OR e.next_send_at IS NULL OR e.next_send_at <= now() + interval '1 second')
    AND ($breaker_failures::int = 0 OR e.probe_at IS NULL OR e.probe_at <= now())
  FOR NO KEY UPDATE OF e SKIP LOCKED
), due AS (
  SELECT eps.id AS endpoint_id, eps.pos, eps.share, eps.slow, eps.max_in_flight, eps.timeout_ms, eps.send_interval_ms, eps.send_base, eps.allowed, w.tenant_id, w.delivery_id, w.next_attempt_at,
    coalesce(w.lease_until > now(), false) AS leased
  FROM eps CROSS JOIN LATERAL (
    -- The tenant's rows for the endpoint (an endpoint holds another tenant's rows only after an
    -- operator's replay to it, which are counted in that tenant's walk).
    SELECT q.tenant_id, q.delivery_id, q.next_attempt_at, q.lease_until FROM outbox_queue q
    WHERE q.tenant_id = eps.tenant_id AND q.endpoint_id = eps.id AND NOT q.failed AND q.next_attempt_at <= now()
    ORDER BY q.next_attempt_at
    LIMIT eps.max_in_flight + $limit::int
  ) w
), candidates AS (
  -- Within the endpoint's free slots, then within its tenant's share of this claim, then (a slow
  -- endpoint) within the slow lane's free requests.
  SELECT s.tenant_id, s.delivery_id, s.endpoint_id, s.pos, s.timeout_ms, s.send_interval_ms, s.send_base, s.n FROM (
    SELECT c.*,
      row_number() OVER (PARTITION BY c.tenant_id ORDER BY c.pos, c.n) AS in_tenant,
      row_number() OVER (PARTITION BY c.slow ORDER BY c.pos, c.n) AS in_lane
    FROM (
      SELECT due.*,
        -- The row's place among its endpoint's due rows that are not leased, and the endpoint's free slots.
        count(*) FILTER (WHERE NOT due.leased) OVER (PARTITION BY due.endpoint_id ORDER BY due.next_attempt_at, due.delivery_id ROWS UNBOUNDED PRECEDING) AS n,
        due.max_in_flight - count(*) FILTER (WHERE due.leased) OVER (PARTITION BY due.endpoint_id) AS free
      FROM due
    ) c
    WHERE NOT c.leased AND c.n <= least($limit::int, c.free, c.allowed)
  ) s
  WHERE s.in_tenant <= s.share AND (NOT s.slow OR s.in_lane <= $slow_free::int)
), picked AS (
  -- The record is locked first, as every other writer of both tables does (no deadlock); its tests
  -- are checked again on a row changed since this statement's snapshot (a cancel, a replay, another
  -- dispatcher's claim). The queue rows above were read in that snapshot: a claim that committed after
  -- it, just before this statement took the endpoint's lock, reads there as not leased. The record's
  -- next_attempt_at is its due time while pending and its lease's end while sending, so testing it here,
  -- on the latest version, keeps a live lease (or a retry not yet due) from being claimed twice.
  -- (LATERAL: one primary-key probe per candidate, (tenant_id, id) as the queue row names it; a join may
  -- be planned as a scan of every record.)
  SELECT d.tenant_id, d.id, d.message_id, candidates.endpoint_id, candidates.pos, candidates.timeout_ms, d.status AS previous_status, d.last_attempt_at AS previous_attempt_at,
    candidates.send_interval_ms, candidates.send_base,
    -- The delivery's send time, its place among the endpoint's picked rows (a row cut by the LIMIT below
    -- leaves its time unused: slower, never faster).
    CASE WHEN candidates.send_interval_ms IS NULL THEN 0::double precision
      ELSE greatest(0, extract(epoch FROM candidates.send_base - now()) * 1000
        + (row_number() OVER (PARTITION BY candidates.endpoint_id ORDER BY candidates.n) - 1) * candidates.send_interval_ms) END AS wait_ms
  FROM candidates CROSS JOIN LATERAL (
    SELECT d.tenant_id, d.id, d.message_id, d.status, d.last_attempt_at FROM outbox_deliveries d
    WHERE d.tenant_id = candidates.tenant_id AND d.id = candidates.delivery_id AND d.status IN ('pending', 'sending') AND d.next_attempt_at <= now()
    FOR UPDATE SKIP LOCKED
  ) d
  -- The walk's order: what the LIMIT cuts is the end of the round robin, which the next claim starts at.
  ORDER BY candidates.pos, candidates.n
  LIMIT $limit
), leased AS (
  UPDATE outbox_queue q SET lease_until = now() + (picked.wait_ms + picked.timeout_ms + $lease_margin_ms::double precision) * interval '1 millisecond'
  FROM picked WHERE q.tenant_id = picked.tenant_id AND q.delivery_id = picked.id
), paced AS (
  -- The endpoint's next free send time follows the last one handed out (rate-limited endpoints only).
  UPDATE endpoints e SET next_send_at = p.send_base + (p.wait_ms_max + p.send_interval_ms) * interval '1 millisecond'
  FROM (SELECT picked.endpoint_id, max(picked.send_base) AS send_base, max(picked.send_interval_ms) AS send_interval_ms,
          max(picked.wait_ms) - extract(epoch FROM max(picked.send_base) - now()) * 1000 AS wait_ms_max
        FROM picked WHERE picked.send_interval_ms IS NOT NULL GROUP BY picked.endpoint_id) p
  WHERE e.id = p.endpoint_id
), counted AS (
  -- The tenants' requests claimed (a taken-back abandoned attempt is counted already).
  UPDATE tenants t SET requests_claimed = t.requests_claimed + x.n
  FROM (SELECT picked.tenant_id, count(*) FILTER (WHERE picked.previous_status = 'pending') AS n FROM picked GROUP BY picked.tenant_id) x
  WHERE t.id = x.tenant_id AND x.n > 0
), claimed AS (
  UPDATE outbox_deliveries d
  SET status = 'sending', attempts = d.attempts + 1, lease = $lease, last_attempt_at = now(),
      next_attempt_at = now() + (picked.wait_ms + picked.timeout_ms + $lease_margin_ms::double precision) * interval '1 millisecond'
  FROM picked
  -- The message by its whole key, one probe per row. (As a plain join, the generic plan once read the
  -- message through another index by tenant alone, every message of the tenant for each delivery:
  -- LIMIT keeps this a lookup the planner cannot flatten into such a join.)
  CROSS JOIN LATERAL (
    SELECT m.payload, m.event_type, m.traceparent FROM outbox_messages m
    WHERE m.tenant_id = picked.tenant_id AND m.id = picked.message_id LIMIT 1
  ) m
  JOIN endpoints e ON e.id = picked.endpoint_id
  WHERE d.tenant_id = picked.tenant_id AND d.id = picked.id
  -- Every returned value is decoded for every row: the endpoint's values come in forms that are cheap to
  -- read (numbers, text), and a timestamp only where it is used.
  RETURNING d.tenant_id, d.id, d.message_id, d.endpoint_id, coalesce(d.url, e.url) AS url, d.attempts AS attempt, d.ladder_base,
    picked.previous_status, CASE WHEN picked.previous_status = 'sending' THEN picked.previous_attempt_at END AS previous_attempt_at,
    m.payload, m.event_type, m.traceparent, e.scheme, e.scheme_options::text AS scheme_options_json, e.timeout_ms, e.ladder::text AS ladder_json,
    (extract(epoch FROM e.updated_at) * 1000)::double precision AS endpoint_updated_ms, e.consecutive_failures, e.failed_attempts_in_row, picked.wait_ms, picked.send_interval_ms,
    e.event_id AS event_id_mode, e.slow_p90_ms,
    CASE WHEN picked.send_interval_ms IS NULL THEN 0 ELSE extract(epoch FROM now()) * 1000 + picked.wait_ms END::double precision AS send_at_ms,
    picked.pos
)
-- One row per claimed delivery, each carrying where the next claim's walk starts: the last tenant
-- claimed from, else (nothing claimed) the walk's last step, so a stretch of tenants that could not
-- be claimed from is stepped over, not read again. The outer join keeps that one row when nothing was
-- claimed (its delivery columns are null).
SELECT claimed.*, cursor.next_after FROM (
  SELECT coalesce((SELECT claimed.tenant_id FROM claimed ORDER BY claimed.pos DESC LIMIT 1),
                  (SELECT walk.tenant_id FROM walk ORDER BY walk.pos DESC LIMIT 1)) AS next_after
) cursor LEFT JOIN claimed ON true`,
  // Its best plan depends on the queue's size (QueryOptions.sizeDependentPlan).
  'prepared-replanned',
);

/** What one claim returns: its deliveries, and where the next claim's round robin over tenants starts. */
export interface OutboxClaim {
  rows: OutboxClaimRow[];
  nextAfter: string;
}

export interface ClaimOptions {
  limit: number;
  lease: string;
  leaseMarginMs: number;
  /** Failed attempts in a row that open an endpoint's circuit breaker; 0 turns it off. */
  breakerFailures: number;
  /** The rate limit's safety margin (`sending.rate_limit_margin`), shared among each period's send times. */
  paceMarginMs?: number | undefined;
  /** The previous claim's `nextAfter` (the last tenant claimed from); '' starts at the first. */
  after: string;
  /** Per tenant, the endpoint this dispatcher last claimed from in it: the tenant's walk starts after it. */
  cursors?: ReadonlyMap<string, string> | undefined;
  /** Rows a tenant of weight 1 may take in one claim (CLAIM_QUANTUM). */
  quantum?: number | undefined;
  /** `sending.tenant_max_in_flight`: a tenant's requests in flight across dispatchers; 0 for no cap. */
  tenantCap?: number | undefined;
  /** Requests the slow lane may still start in this dispatcher (rows of slow endpoints this claim may take). */
  slowFree?: number | undefined;
}

/**
 * Rows a tenant of weight 1 takes from one claim, at least. The dispatcher sizes each claim's quantum by
 * the tenants the previous claim served (its batch shared among them), so one busy tenant alone still
 * fills whole batches, and a tenant that turns up waits at most one claim for its share.
 */
export const CLAIM_QUANTUM = 8;

/** Claims up to `limit` due deliveries, going round the tenants with queued rows from after `after`. */
export async function claimDeliveriesAfter(db: Queryable, options: ClaimOptions): Promise<OutboxClaim> {
  const cursors = options.cursors ?? new Map<string, string>();
  const { rows } = await claimStatement.run(db, {
    limit: options.limit,
    lease: options.lease,
    lease_margin_ms: options.leaseMarginMs,
    breaker_failures: options.breakerFailures,
    pace_margin_ms: options.paceMarginMs ?? 0,
    after_tenant: options.after,
    cursor_tenants: [...cursors.keys()],
    cursor_after: [...cursors.values()],
    quantum: options.quantum ?? CLAIM_QUANTUM,
    tenant_cap: options.tenantCap ?? 0,
    slow_free: options.slowFree ?? 2_147_483_647,
  });
  const nextAfter = rows[0]?.next_after ?? options.after;
  // With nothing claimed, the one row carries only the cursor.
  return { rows: rows[0]?.id === null ? [] : (rows as OutboxClaimRow[]), nextAfter };
}

/** A claim that starts its walk at the first tenant (tests, the store-only bench). */
export async function claimDeliveries(
  db: Queryable,
  limit: number,
  lease: string,
  leaseMarginMs: number,
  breakerFailures = 0,
  paceMarginMs = 0,
): Promise<OutboxClaimRow[]> {
  return (await claimDeliveriesAfter(db, { limit, lease, leaseMarginMs, breakerFailures, paceMarginMs, after: '' })).rows;
}

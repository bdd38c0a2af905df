-- Fair sending (docs/sending.md, "Fairness"): the claim goes round the tenants with due work, then round
-- the endpoints inside each tenant, and holds a cap on each tenant's requests in flight across every
-- dispatcher.
--
-- The tenant's own settings for the claim: `max_in_flight` (null: sending.tenant_max_in_flight) and
-- `weight`, the share of each claim the tenant may take against others (a provider's plans).
ALTER TABLE tenants ADD COLUMN max_in_flight int CHECK (max_in_flight IS NULL OR max_in_flight > 0);
ALTER TABLE tenants ADD COLUMN weight int NOT NULL DEFAULT 1 CHECK (weight BETWEEN 1 AND 1000);

-- A tenant's requests in flight are its requests claimed less its requests finished. The two counts live
-- on different rows so claims and completions never wait for each other: `requests_claimed` on the
-- tenant's row, which a claim locks when the tenant is near its cap (FOR NO KEY UPDATE, which
-- publishing's foreign-key checks do not block) and so reads at its latest value; `requests_done` here, added to by every completion and every
-- claim given back. A claim reads the finished count in its own snapshot, which can only be behind: it
-- sees at most more in flight than there are, never fewer, so the cap holds across any number of
-- dispatchers. A claim that takes back an abandoned attempt (its dispatcher died) does not count it
-- again: the abandoned attempt's own count is still there, and the new attempt's completion settles it.
ALTER TABLE tenants ADD COLUMN requests_claimed bigint NOT NULL DEFAULT 0;
CREATE TABLE outbox_tenant_done (
  tenant_id text PRIMARY KEY,
  requests_done bigint NOT NULL DEFAULT 0
);

-- The walk over tenants, then endpoints inside each tenant: a loose index scan of this index (one probe
-- a step), the tenant leading. outbox_queue_due stays for the reads by endpoint alone.
CREATE INDEX outbox_queue_tenant_due ON outbox_queue (tenant_id, endpoint_id, next_attempt_at) WHERE NOT failed;

-- An endpoint whose recent answers are slow (p90 at or past sending.slow_lane.threshold) is sent to from
-- the slow lane: its p90 in milliseconds, written by the dispatchers when the endpoint enters or leaves
-- the lane (and as it changes), null while the endpoint answers in time.
ALTER TABLE endpoints ADD COLUMN slow_p90_ms int;

-- Store outages, for the store_unreachable alert rule (docs/alerts.md). While the store is down it can
-- hold nothing, so each process counts the store's failures (its 503 STORE_UNAVAILABLE answers, the
-- alert evaluator's failed rounds) in memory and, once the store answers again, writes one row for the
-- outage it saw: from its first failure to the write that succeeded. The evaluator opens one incident
-- for the outages of the recent past and closes it once the store has stayed up for a while. Rows past
-- a day are deleted by the evaluator.
CREATE TABLE store_outages (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  process text NOT NULL,
  first_failure_at timestamptz NOT NULL,
  last_failure_at timestamptz NOT NULL,
  recovered_at timestamptz NOT NULL DEFAULT now(),
  failures integer NOT NULL
);
CREATE INDEX store_outages_recovered ON store_outages (recovered_at);

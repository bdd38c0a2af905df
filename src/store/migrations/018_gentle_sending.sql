-- Gentle sending (docs/sending.md, "Rate limits and the circuit breaker").
-- rate_limit is the operator's text ("20/s"); send_interval_ms the gap it makes between two requests.
-- next_send_at is when the endpoint's next request may start: the claim, holding the endpoint's row
-- lock, hands out send times from it and moves it on, so the pace holds across dispatchers.
ALTER TABLE endpoints ADD COLUMN rate_limit text;
ALTER TABLE endpoints ADD COLUMN send_interval_ms double precision;
ALTER TABLE endpoints ADD COLUMN next_send_at timestamptz;
-- The circuit breaker: failed attempts in a row (a success resets it; failed_deliveries in a row stay in
-- consecutive_failures, for disable_after_failures), and, while open, when the next probe may start.
ALTER TABLE endpoints ADD COLUMN failed_attempts_in_row integer NOT NULL DEFAULT 0;
ALTER TABLE endpoints ADD COLUMN probe_at timestamptz;

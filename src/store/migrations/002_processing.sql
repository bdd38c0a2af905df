-- Processing side: leases, attempts, the review queue and the ordering guard.

-- 'discarded' keeps a row an operator gave up on, so a provider's late retry of it stays a duplicate.
ALTER TABLE inbox_deliveries DROP CONSTRAINT IF EXISTS inbox_deliveries_status_check;
ALTER TABLE inbox_deliveries ADD CONSTRAINT inbox_deliveries_status_check
  CHECK (status IN ('pending', 'processing', 'done', 'stale', 'dead', 'discarded'));

ALTER TABLE inbox_deliveries
  ADD COLUMN locked_by       text,
  ADD COLUMN claimed_at      timestamptz,
  ADD COLUMN last_attempt_at timestamptz,
  -- Set by a forced replay: the next attempt skips the ordering guard once.
  ADD COLUMN guard_bypass    boolean NOT NULL DEFAULT false;

-- The claim scans due pending rows in time order; the partial index stays small because done rows leave it.
CREATE INDEX inbox_deliveries_due ON inbox_deliveries (next_attempt_at) WHERE status = 'pending';
-- The per-resource guard ("nothing of this resource in flight, nothing earlier pending") and lease sweeps.
CREATE INDEX inbox_deliveries_open_resource ON inbox_deliveries (source, resource_id)
  WHERE status IN ('pending', 'processing');
CREATE INDEX inbox_deliveries_leased ON inbox_deliveries (locked_until) WHERE status = 'processing';
-- The review queue and status filters of the admin API.
CREATE INDEX inbox_deliveries_status_received ON inbox_deliveries (status, received_at);

-- One row per processing attempt. No body and no secrets: error is a sanitized summary.
CREATE TABLE inbox_attempts (
  id          bigserial   PRIMARY KEY,
  source      text        NOT NULL,
  event_id    text        NOT NULL,
  attempt     integer     NOT NULL,
  worker      text,
  started_at  timestamptz NOT NULL,
  finished_at timestamptz NOT NULL DEFAULT now(),
  duration_ms integer,
  outcome     text        NOT NULL CHECK (outcome IN ('done', 'retry', 'dead', 'stale', 'lost')),
  error       text,
  FOREIGN KEY (source, event_id) REFERENCES inbox_deliveries (source, event_id) ON DELETE CASCADE
);
CREATE INDEX inbox_attempts_delivery ON inbox_attempts (source, event_id, id);

-- The ordering guard: the last state applied to each business object, and when the provider said so.
CREATE TABLE resources (
  source      text        NOT NULL,
  resource_id text        NOT NULL,
  state       text,
  rank        integer,
  occurred_at timestamptz,
  event_id    text        NOT NULL,
  updated_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (source, resource_id)
);

-- Wakes workers when deliveries arrive. Statement-level: one notification per group-commit insert.
CREATE FUNCTION tekil_inbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('tekil_inbox', '');
  RETURN NULL;
END $$;
CREATE TRIGGER inbox_deliveries_notify AFTER INSERT ON inbox_deliveries
  FOR EACH STATEMENT EXECUTE FUNCTION tekil_inbox_notify();

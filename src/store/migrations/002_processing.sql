-- Processing side: leases, attempts, the review queue and the ordering guard.

-- 'discarded' keeps a row an operator gave up on, so a provider's late retry of it stays a duplicate.
-- 'processing' is not stored: a claimed delivery stays 'pending' with a live lease (locked_until in the
-- future), and readers show it as processing. The claim then changes no indexed column, so Postgres
-- can write it as a heap-only (HOT) update with no index entries; the spare room HOT needs on each
-- page is what the fillfactor below leaves.
ALTER TABLE inbox_deliveries SET (fillfactor = 50);
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
-- The per-resource guard ("nothing of this resource in flight, nothing earlier pending"), probed once
-- per claimed delivery. Only ever looked up by equality, so a hash index: one hash per probe and per
-- insert instead of a descent of locale-aware text comparisons. The source is checked on the row.
-- Every index is written on each completion, so there are as few as the queries need.
CREATE INDEX inbox_deliveries_open_resource ON inbox_deliveries USING hash (resource_id) WHERE status = 'pending';
-- The review queue. Partial: rows that are not dead cost nothing to keep in it.
CREATE INDEX inbox_deliveries_dead ON inbox_deliveries (received_at) WHERE status = 'dead';

-- One row per processing attempt. No body and no secrets: error is a sanitized summary.
-- Deleting deliveries (retention) deletes their attempts by (source, event_id).
CREATE TABLE inbox_attempts (
  id          bigint      GENERATED ALWAYS AS IDENTITY,
  source      text        NOT NULL,
  event_id    text        NOT NULL,
  attempt     integer     NOT NULL,
  worker      text,
  started_at  timestamptz NOT NULL,
  finished_at timestamptz NOT NULL DEFAULT now(),
  duration_ms integer,
  outcome     text        NOT NULL CHECK (outcome IN ('done', 'retry', 'dead', 'stale', 'lost')),
  error       text,
  -- The identity alone is the key: appending to an integer index is the cheapest insert there is,
  -- and every attempt is one insert.
  PRIMARY KEY (id)
  -- No foreign key to inbox_deliveries: its per-row check would cost a lookup on every completion,
  -- and attempts are only ever written for a delivery row the same transaction holds locked.
);
-- A delivery's attempts are read by equality on its event id (the source is checked on the row, the
-- order comes from id): a hash index, one hash per insert instead of a descent of text comparisons.
CREATE INDEX inbox_attempts_delivery ON inbox_attempts USING hash (event_id);

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

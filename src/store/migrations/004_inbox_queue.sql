-- The work queue moves out of inbox_deliveries into its own small table.
--
-- Why: settling a delivery changed its status, and status sat in the predicates of the queue's
-- partial indexes, so every completion was a non-HOT update that wrote a new entry into every index of
-- the big table (primary key, resource, received_at). Now inbox_deliveries has no index on any column
-- processing changes: completing a delivery is a heap-only (HOT) update of its record plus the DELETE
-- of its queue row, which writes no index entry at all. The claim is a HOT update of the queue row.
--
-- inbox_queue holds one row per delivery that is not settled: pending (due, waiting for a retry, or
-- leased by a worker) or dead (parked in the review queue). done, stale and discarded deliveries have
-- no queue row. inbox_deliveries.status stays the delivery's status; the lease, the next attempt and
-- the replay flag live here.
CREATE TABLE inbox_queue (
  source          text        NOT NULL,
  event_id        text        NOT NULL,
  resource_id     text,
  -- A resource's deliveries run in this order: provider time (received time when the provider gives
  -- none), then received time, then event id. Copied here so the ordering check reads one table.
  provider_at     timestamptz NOT NULL,
  received_at     timestamptz NOT NULL,
  -- Parked in the review queue: never claimed, does not hold up its resource's later deliveries.
  dead            boolean     NOT NULL DEFAULT false,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  -- Attempts started, counting one in flight; inbox_deliveries.attempts catches up when it ends.
  attempts        integer     NOT NULL DEFAULT 0,
  -- The lease: a claimed row stays here with locked_until in the future and shows as processing.
  locked_until    timestamptz,
  locked_by       text,
  claimed_at      timestamptz,
  -- Set by a forced replay: the next attempt skips the ordering guard once.
  guard_bypass    boolean     NOT NULL DEFAULT false,
  -- Event id first: the ordering check looks rows up by (resource_id, source), and with the source
  -- leading here the planner could be tempted, before the queue has statistics, to scan this key by
  -- source alone.
  PRIMARY KEY (event_id, source)
) WITH (fillfactor = 35);
-- A batch claims neighbouring rows, so every row of a page is updated in one transaction and all the new
-- versions need room on the page at once, each larger than the original by the lease (locked_until,
-- claimed_at, locked_by: about half again). A HOT update needs that room on the same page; with less,
-- the update writes an entry into every index. The queue only holds open work, so the space is cheap.

-- The claim scans due rows in time order.
CREATE INDEX inbox_queue_due ON inbox_queue (next_attempt_at) WHERE NOT dead;
-- The per-resource ordering check, probed once per claimed delivery by equality only: a hash index.
CREATE INDEX inbox_queue_resource ON inbox_queue USING hash (resource_id) WHERE NOT dead;
-- The review queue, newest first.
CREATE INDEX inbox_queue_dead ON inbox_queue (received_at) WHERE dead;

-- 'processing' was never stored (002), but a row written so by hand is pending.
UPDATE inbox_deliveries SET status = 'pending' WHERE status = 'processing';
INSERT INTO inbox_queue (source, event_id, resource_id, provider_at, received_at, dead, next_attempt_at, attempts,
                         locked_until, locked_by, claimed_at, guard_bypass)
SELECT source, event_id, resource_id, coalesce(occurred_at, received_at), received_at, status = 'dead', next_attempt_at,
       attempts, locked_until, locked_by, claimed_at, guard_bypass
FROM inbox_deliveries
WHERE status IN ('pending', 'dead');

-- Admin filter by resource id. Without the leading source column, no index but the primary key
-- matches a lookup by (source, event_id), so no plan can pick another one for it.
DROP INDEX inbox_deliveries_resource;
CREATE INDEX inbox_deliveries_resource ON inbox_deliveries (resource_id);
DROP INDEX inbox_deliveries_due;
DROP INDEX inbox_deliveries_open_resource;
DROP INDEX inbox_deliveries_dead;
ALTER TABLE inbox_deliveries
  DROP COLUMN next_attempt_at,
  DROP COLUMN locked_until,
  DROP COLUMN locked_by,
  DROP COLUMN claimed_at,
  DROP COLUMN guard_bypass;

-- Every new pending delivery gets its queue row in the statement that records it, whoever inserts it
-- (the receiver's group commit, an import, a test): a statement-level trigger reads the rows the
-- statement actually inserted (ON CONFLICT DO NOTHING skips leave none) and queues them in one INSERT,
-- then wakes the workers once.
DROP TRIGGER inbox_deliveries_notify ON inbox_deliveries;
DROP FUNCTION tekil_inbox_notify();
CREATE FUNCTION tekil_inbox_enqueue() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO inbox_queue AS q (source, event_id, resource_id, provider_at, received_at, dead)
  SELECT a.source, a.event_id, a.resource_id, coalesce(a.occurred_at, a.received_at), a.received_at, a.status = 'dead'
  FROM added a
  WHERE a.status IN ('pending', 'dead');
  IF FOUND THEN
    PERFORM pg_notify('tekil_inbox', '');
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER inbox_deliveries_enqueue AFTER INSERT ON inbox_deliveries
  REFERENCING NEW TABLE AS added
  FOR EACH STATEMENT EXECUTE FUNCTION tekil_inbox_enqueue();

-- A queue row never outlives its record (a worker could not claim it, and it would hold up its
-- resource): deleting records deletes their queue rows, truncating the table truncates the queue.
-- A foreign key would do the same but check every enqueued row against the record on the hot path.
CREATE FUNCTION tekil_inbox_dequeue_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM inbox_queue q USING removed r WHERE q.event_id = r.event_id AND q.source = r.source;
  RETURN NULL;
END $$;
CREATE TRIGGER inbox_deliveries_dequeue AFTER DELETE ON inbox_deliveries
  REFERENCING OLD TABLE AS removed
  FOR EACH STATEMENT EXECUTE FUNCTION tekil_inbox_dequeue_deleted();
CREATE FUNCTION tekil_inbox_truncate_queue() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  TRUNCATE inbox_queue;
  RETURN NULL;
END $$;
CREATE TRIGGER inbox_deliveries_truncate AFTER TRUNCATE ON inbox_deliveries
  FOR EACH STATEMENT EXECUTE FUNCTION tekil_inbox_truncate_queue();

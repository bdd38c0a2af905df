-- The dispatcher's work queue moves out of outbox_deliveries into its own small table, as the inbox's
-- did in 004.
--
-- Why: the claim (pending → sending) and the completion (sending → succeeded) both changed `status`,
-- which the partial indexes named, so neither could be a heap-only (HOT) update: each wrote the row anew
-- into every index of the delivery record (primary key, destination, endpoint, due, in flight). With the
-- attempt row, a delivery cost eleven btree entries, and inserting them was over a third of the
-- dispatcher's Postgres time.
--
-- Now no index of outbox_deliveries names a column the dispatcher changes, so its claim and its
-- completion are HOT updates of the record. outbox_queue holds one narrow row per delivery that is not
-- settled: pending (due, waiting for a retry, or leased by a dispatcher) or failed (kept for the list and
-- the bulk replay of failed deliveries, as inbox_queue keeps dead ones). The claim writes only the
-- lease's end into it (HOT: no index names it); a success deletes the row, which writes no index entry.
-- A delivery's status, attempts and lease stay on outbox_deliveries: readers are unchanged.
CREATE TABLE outbox_queue (
  delivery_id     bigint      PRIMARY KEY,
  endpoint_id     text        NOT NULL,
  -- When the delivery is due. A claim leaves it as it is (the lease has its own column), so the due
  -- index keeps a leased row where it was: the in-flight count reads it there (see the claim).
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  -- Set by a claim to the lease's end. A row whose lease_until is in the future is in flight; one whose
  -- lease ran out is due again (its dispatcher died).
  lease_until     timestamptz,
  -- The ladder ran out or the delivery cannot be sent: never claimed, listed with the failed ones.
  failed          boolean     NOT NULL DEFAULT false
) WITH (fillfactor = 50);
-- The claim: due rows per endpoint in time order.
CREATE INDEX outbox_queue_due ON outbox_queue (endpoint_id, next_attempt_at) WHERE NOT failed;
-- Failed deliveries: the dashboard's count and the bulk replay.
CREATE INDEX outbox_queue_failed ON outbox_queue (delivery_id) WHERE failed;
-- As inbox_queue (009): its size swings between zero and millions, so a fixed count of changed rows
-- triggers vacuum and analyze, not a share of its size.
ALTER TABLE outbox_queue SET (
  autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 5000,
  autovacuum_analyze_scale_factor = 0, autovacuum_analyze_threshold = 5000,
  autovacuum_vacuum_cost_limit = 2000);

-- A sending delivery's record keeps the lease's end in next_attempt_at.
INSERT INTO outbox_queue (delivery_id, endpoint_id, next_attempt_at, lease_until, failed)
SELECT id, endpoint_id, CASE WHEN status = 'sending' THEN coalesce(last_attempt_at, next_attempt_at) ELSE next_attempt_at END,
       CASE WHEN status = 'sending' THEN next_attempt_at END, status = 'failed'
FROM outbox_deliveries
WHERE status IN ('pending', 'sending', 'failed');

DROP INDEX outbox_deliveries_due;
DROP INDEX outbox_deliveries_in_flight;
DROP INDEX outbox_deliveries_failed;
-- A claim and a completion each write a new version of the record; a HOT update needs room for it on
-- the same page. Completions come in groups of neighbouring rows, all in one transaction, so a page
-- needs room for a second version of most of its rows at once. (Existing pages keep their fill.)
ALTER TABLE outbox_deliveries SET (fillfactor = 50);

-- 012's functions, each new delivery also entering the queue in the same statement.
CREATE OR REPLACE FUNCTION tekil_outbox_publish(p_id text, p_event_type text, p_resource_id text, p_payload bytea,
                                                p_idempotency_key text, p_extra_endpoint_ids text[], p_extra_urls text[])
RETURNS TABLE (id text, deliveries int) LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
BEGIN
  RETURN QUERY
  WITH msg AS (
    INSERT INTO outbox_messages (id, event_type, resource_id, payload, idempotency_key)
    VALUES (p_id, p_event_type, p_resource_id, p_payload, p_idempotency_key)
    ON CONFLICT (idempotency_key) DO NOTHING
    RETURNING outbox_messages.id, outbox_messages.event_type
  ), fanout AS (
    INSERT INTO outbox_deliveries (message_id, endpoint_id, url)
    SELECT msg.id, e.id, NULL FROM msg JOIN endpoints e
      ON e.enabled AND e.deleted_at IS NULL AND (
        cardinality(e.event_types) = 0
        OR msg.event_type = ANY (e.event_types)
        OR EXISTS (SELECT 1 FROM unnest(e.event_types) AS p
                   WHERE p = '*' OR (right(p, 2) = '.*' AND starts_with(msg.event_type, left(p, -1)))))
    UNION ALL
    SELECT msg.id, x.endpoint_id, x.url FROM msg CROSS JOIN unnest(p_extra_endpoint_ids, p_extra_urls) AS x (endpoint_id, url)
    ON CONFLICT DO NOTHING
    RETURNING outbox_deliveries.id, outbox_deliveries.endpoint_id
  ), queued AS (
    INSERT INTO outbox_queue (delivery_id, endpoint_id) SELECT f.id, f.endpoint_id FROM fanout f
  )
  SELECT msg.id, (SELECT count(*) FROM fanout)::int FROM msg;
  -- No row: the idempotency key was used before, nothing new to send (and nothing to check).
  IF NOT FOUND THEN
    RETURN;
  END IF;
  IF cardinality(p_extra_endpoint_ids) > 0 THEN
    PERFORM tekil_outbox_require_endpoints(p_extra_endpoint_ids);
  END IF;
  IF pg_try_advisory_xact_lock(7628139, 1) THEN
    PERFORM pg_notify('tekil_outbox', '');
  END IF;
END $fn$;

CREATE OR REPLACE FUNCTION tekil_outbox_publish_many(p_ids text[], p_event_types text[], p_resource_ids text[], p_payloads bytea,
                                                     p_payload_starts int[], p_payload_lengths int[], p_idempotency_keys text[],
                                                     p_extra_ns int[], p_extra_endpoint_ids text[], p_extra_urls text[])
RETURNS TABLE (n int, id text, deliveries int, duplicate boolean) LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
BEGIN
  RETURN QUERY
  WITH input AS (
    SELECT * FROM unnest(p_ids, p_event_types, p_resource_ids, p_payload_starts, p_payload_lengths, p_idempotency_keys)
      WITH ORDINALITY AS i (id, event_type, resource_id, payload_start, payload_length, idempotency_key, n)
  ), msg AS (
    INSERT INTO outbox_messages (id, event_type, resource_id, payload, idempotency_key)
    SELECT i.id, i.event_type, i.resource_id, substring(p_payloads FROM i.payload_start FOR i.payload_length), i.idempotency_key
    FROM input i ORDER BY i.n
    ON CONFLICT (idempotency_key) DO NOTHING
    RETURNING outbox_messages.id, outbox_messages.event_type
  ), fanout AS (
    INSERT INTO outbox_deliveries (message_id, endpoint_id, url)
    SELECT msg.id, e.id, NULL FROM msg JOIN endpoints e
      ON e.enabled AND e.deleted_at IS NULL AND (
        cardinality(e.event_types) = 0
        OR msg.event_type = ANY (e.event_types)
        OR EXISTS (SELECT 1 FROM unnest(e.event_types) AS p
                   WHERE p = '*' OR (right(p, 2) = '.*' AND starts_with(msg.event_type, left(p, -1)))))
    UNION ALL
    SELECT msg.id, x.endpoint_id, x.url
    FROM msg JOIN input i ON i.id = msg.id
    JOIN unnest(p_extra_ns, p_extra_endpoint_ids, p_extra_urls) AS x (n, endpoint_id, url) ON x.n = i.n
    ON CONFLICT DO NOTHING
    RETURNING outbox_deliveries.id, outbox_deliveries.message_id, outbox_deliveries.endpoint_id
  ), queued AS (
    INSERT INTO outbox_queue (delivery_id, endpoint_id) SELECT f.id, f.endpoint_id FROM fanout f
  ), counts AS (
    SELECT f.message_id, count(*)::int AS deliveries FROM fanout f GROUP BY f.message_id
  )
  SELECT i.n::int, msg.id, coalesce(c.deliveries, 0), false
  FROM msg JOIN input i ON i.id = msg.id LEFT JOIN counts c ON c.message_id = msg.id;
  IF FOUND THEN
    -- Only the extra destinations of messages inserted above (a repeat's are not used).
    IF cardinality(p_extra_endpoint_ids) > 0 THEN
      PERFORM tekil_outbox_require_endpoints(ARRAY(
        SELECT x.endpoint_id FROM unnest(p_extra_ns, p_extra_endpoint_ids) AS x (n, endpoint_id)
        JOIN outbox_messages o ON o.id = p_ids[x.n]));
    END IF;
    IF pg_try_advisory_xact_lock(7628139, 1) THEN
      PERFORM pg_notify('tekil_outbox', '');
    END IF;
  END IF;
  RETURN QUERY
  SELECT k.n::int, o.id, 0, true
  FROM unnest(p_idempotency_keys) WITH ORDINALITY AS k (idempotency_key, n)
  JOIN outbox_messages o ON o.idempotency_key = k.idempotency_key
  WHERE o.id <> p_ids[k.n];
END $fn$;

-- Publishing becomes one call of a PL/pgSQL function, the same statement as before inside it.
--
-- Why: publish() runs in the caller's transaction, usually on the caller's own connection, where tekil
-- cannot prepare a statement (to node-postgres a name is the caller's business, and poolers may not
-- keep it). Sent as text, the statement (a CTE with the fan-out join) was parsed and planned on every
-- call, which cost Postgres about as much as running it. A PL/pgSQL function keeps its plans for the
-- connection, so each call only parses a one-line SELECT: Postgres CPU per publishing transaction fell by
-- about 40% in bench:publish.
--
-- The wake-up: only the transaction that gets the outbox wake-up lock (a transaction-scoped advisory
-- lock, two-key space: 7628139 = "tek", 1) sends NOTIFY tekil_outbox; see publish-message.ts.
CREATE FUNCTION tekil_outbox_publish(p_id text, p_event_type text, p_resource_id text, p_payload bytea,
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
    RETURNING 1
  )
  SELECT msg.id, (SELECT count(*) FROM fanout)::int FROM msg;
  -- No row: the idempotency key was used before, nothing new to send.
  IF FOUND AND pg_try_advisory_xact_lock(7628139, 1) THEN
    PERFORM pg_notify('tekil_outbox', '');
  END IF;
END $fn$;

-- The sending side's keys lead with tenant_id (docs/deploy.md, "Sharding the sending side"): the
-- distribution column a sharded Postgres (Citus) needs in every unique key, and the order that keeps one
-- tenant's messages, deliveries, queue rows and attempts side by side in every key.
--
-- Deliveries, queue rows and attempts gain the column, written by whoever inserts them (the fan-out and
-- a ping from the message's tenant, the completion and the abandoned-attempt record from the claimed
-- delivery's). Every statement on the hot paths finds its rows by (tenant_id, id): the claim reads the
-- tenant from the queue row and hands it to the completion, so no lookup walks a key by its second
-- column. Two indexes on id alone remain, for the operator's views across all tenants (the newest
-- messages and deliveries, one by id): on a sharded cluster they are per shard, and those reads ask
-- every shard.
--
-- Idempotency keys become unique per tenant, (tenant_id, idempotency_key): a unique key must hold the
-- distribution column. Two tenants may now publish under the same key; one tenant's repeat is still
-- the same message.
--
-- Existing rows take their message's tenant (the fan-out only reaches the tenant's own endpoints,
-- migration 016; an operator's replay to one endpoint was the exception, below), else their endpoint's. This rewrites the outbox tables once: on a large history run it in a quiet hour.

ALTER TABLE outbox_deliveries ADD COLUMN tenant_id text;
ALTER TABLE outbox_queue ADD COLUMN tenant_id text;
ALTER TABLE outbox_attempts ADD COLUMN tenant_id text;

UPDATE outbox_deliveries d SET tenant_id = coalesce(
  (SELECT m.tenant_id FROM outbox_messages m WHERE m.id = d.message_id),
  (SELECT e.tenant_id FROM endpoints e WHERE e.id = d.endpoint_id),
  'default');
UPDATE outbox_queue q SET tenant_id = coalesce(
  (SELECT d.tenant_id FROM outbox_deliveries d WHERE d.id = q.delivery_id),
  (SELECT e.tenant_id FROM endpoints e WHERE e.id = q.endpoint_id),
  'default');
UPDATE outbox_attempts a SET tenant_id = coalesce(
  (SELECT d.tenant_id FROM outbox_deliveries d WHERE d.id = a.delivery_id),
  (SELECT m.tenant_id FROM outbox_messages m WHERE m.id = a.message_id),
  (SELECT e.tenant_id FROM endpoints e WHERE e.id = a.endpoint_id),
  'default');

-- Before this migration an operator's replay to one endpoint could name another tenant's endpoint; a
-- delivery made so stays its message's tenant's history, and one not yet sent is cancelled, so the other
-- tenant's endpoint does not receive it (replays now refuse such an endpoint and skip such deliveries).
WITH crossed AS (
  UPDATE outbox_deliveries d SET status = 'cancelled', completed_at = now(), lease = NULL
  FROM endpoints e
  WHERE e.id = d.endpoint_id AND e.tenant_id <> d.tenant_id AND d.status IN ('pending', 'sending')
  RETURNING d.id
)
DELETE FROM outbox_queue q USING crossed WHERE q.delivery_id = crossed.id AND NOT q.failed;

ALTER TABLE outbox_deliveries ALTER COLUMN tenant_id SET NOT NULL;
ALTER TABLE outbox_queue ALTER COLUMN tenant_id SET NOT NULL;
ALTER TABLE outbox_attempts ALTER COLUMN tenant_id SET NOT NULL;

-- Messages: (tenant_id, id) was already an index (outbox_messages_tenant); it becomes the key.
ALTER TABLE outbox_messages DROP CONSTRAINT outbox_messages_pkey;
ALTER TABLE outbox_messages ADD CONSTRAINT outbox_messages_pkey PRIMARY KEY (tenant_id, id);
DROP INDEX outbox_messages_tenant;
CREATE INDEX outbox_messages_id ON outbox_messages (id);
ALTER TABLE outbox_messages DROP CONSTRAINT outbox_messages_idempotency_key_key;
ALTER TABLE outbox_messages ADD CONSTRAINT outbox_messages_idempotency_key_key UNIQUE (tenant_id, idempotency_key);

ALTER TABLE outbox_deliveries DROP CONSTRAINT outbox_deliveries_pkey;
ALTER TABLE outbox_deliveries ADD CONSTRAINT outbox_deliveries_pkey PRIMARY KEY (tenant_id, id);
CREATE INDEX outbox_deliveries_id ON outbox_deliveries (id);
DROP INDEX outbox_deliveries_destination;
CREATE UNIQUE INDEX outbox_deliveries_destination ON outbox_deliveries (tenant_id, message_id, endpoint_id, (coalesce(url, '')));

ALTER TABLE outbox_queue DROP CONSTRAINT outbox_queue_pkey;
ALTER TABLE outbox_queue ADD CONSTRAINT outbox_queue_pkey PRIMARY KEY (tenant_id, delivery_id);

ALTER TABLE outbox_attempts DROP CONSTRAINT outbox_attempts_pkey;
ALTER TABLE outbox_attempts ADD CONSTRAINT outbox_attempts_pkey PRIMARY KEY (tenant_id, id);

-- Publishing writes the tenant on each delivery and queue row, and an idempotency key is the tenant's.
CREATE OR REPLACE FUNCTION tekil_outbox_publish(p_tenant_id text, p_id text, p_event_type text, p_resource_id text, p_payload bytea,
                                                p_idempotency_key text, p_extra_endpoint_ids text[], p_extra_urls text[])
RETURNS TABLE (id text, deliveries int) LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
  extra_endpoint_id text;
BEGIN
  -- A tenant that does not exist or is being deleted: no_data_found, as tekil_outbox_require_tenants.
  PERFORM 1 FROM tenants t WHERE t.id = p_tenant_id AND t.deleted_at IS NULL;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'no tenant %', p_tenant_id USING ERRCODE = 'no_data_found';
  END IF;
  RETURN QUERY
  WITH msg AS (
    INSERT INTO outbox_messages (id, tenant_id, event_type, resource_id, payload, idempotency_key)
    VALUES (p_id, p_tenant_id, p_event_type, p_resource_id, p_payload, p_idempotency_key)
    ON CONFLICT (tenant_id, idempotency_key) DO NOTHING
    RETURNING outbox_messages.id, outbox_messages.event_type
  ), fanout AS (
    INSERT INTO outbox_deliveries (tenant_id, message_id, endpoint_id, url)
    SELECT p_tenant_id, msg.id, e.id, NULL FROM msg JOIN endpoints e
      ON e.tenant_id = p_tenant_id AND e.enabled AND e.deleted_at IS NULL AND (
        cardinality(e.event_types) = 0
        OR msg.event_type = ANY (e.event_types)
        OR EXISTS (SELECT 1 FROM unnest(e.event_types) AS p
                   WHERE p = '*' OR (right(p, 2) = '.*' AND starts_with(msg.event_type, left(p, -1)))))
    UNION ALL
    SELECT p_tenant_id, msg.id, x.endpoint_id, x.url FROM msg CROSS JOIN unnest(p_extra_endpoint_ids, p_extra_urls) AS x (endpoint_id, url)
    ON CONFLICT DO NOTHING
    RETURNING outbox_deliveries.id, outbox_deliveries.endpoint_id
  ), queued AS (
    INSERT INTO outbox_queue (tenant_id, delivery_id, endpoint_id) SELECT p_tenant_id, f.id, f.endpoint_id FROM fanout f
  )
  SELECT msg.id, (SELECT count(*) FROM fanout)::int FROM msg;
  -- No row: the idempotency key was used before, nothing new to send (and nothing to check).
  IF NOT FOUND THEN
    RETURN;
  END IF;
  -- Each extra destination names an endpoint of this tenant (a message has one or two of them).
  FOREACH extra_endpoint_id IN ARRAY p_extra_endpoint_ids LOOP
    PERFORM 1 FROM endpoints e WHERE e.id = extra_endpoint_id AND e.tenant_id = p_tenant_id;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'an extra destination names an endpoint that does not exist' USING ERRCODE = 'foreign_key_violation';
    END IF;
  END LOOP;
  IF pg_try_advisory_xact_lock(7628139, 1) THEN
    PERFORM pg_notify('tekil_outbox', '');
  END IF;
END $fn$;

CREATE OR REPLACE FUNCTION tekil_outbox_publish_many(p_tenant_ids text[], p_ids text[], p_event_types text[], p_resource_ids text[], p_payloads bytea,
                                                     p_payload_starts int[], p_payload_lengths int[], p_idempotency_keys text[],
                                                     p_extra_ns int[], p_extra_endpoint_ids text[], p_extra_urls text[])
RETURNS TABLE (n int, id text, deliveries int, duplicate boolean) LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
BEGIN
  PERFORM tekil_outbox_require_tenants(ARRAY(SELECT DISTINCT unnest(p_tenant_ids)));
  RETURN QUERY
  WITH input AS (
    SELECT * FROM unnest(p_ids, p_tenant_ids, p_event_types, p_resource_ids, p_payload_starts, p_payload_lengths, p_idempotency_keys)
      WITH ORDINALITY AS i (id, tenant_id, event_type, resource_id, payload_start, payload_length, idempotency_key, n)
  ), msg AS (
    INSERT INTO outbox_messages (id, tenant_id, event_type, resource_id, payload, idempotency_key)
    SELECT i.id, i.tenant_id, i.event_type, i.resource_id, substring(p_payloads FROM i.payload_start FOR i.payload_length), i.idempotency_key
    FROM input i ORDER BY i.n
    ON CONFLICT (tenant_id, idempotency_key) DO NOTHING
    RETURNING outbox_messages.id, outbox_messages.tenant_id, outbox_messages.event_type
  ), fanout AS (
    INSERT INTO outbox_deliveries (tenant_id, message_id, endpoint_id, url)
    SELECT msg.tenant_id, msg.id, e.id, NULL FROM msg JOIN endpoints e
      ON e.tenant_id = msg.tenant_id AND e.enabled AND e.deleted_at IS NULL AND (
        cardinality(e.event_types) = 0
        OR msg.event_type = ANY (e.event_types)
        OR EXISTS (SELECT 1 FROM unnest(e.event_types) AS p
                   WHERE p = '*' OR (right(p, 2) = '.*' AND starts_with(msg.event_type, left(p, -1)))))
    UNION ALL
    SELECT msg.tenant_id, msg.id, x.endpoint_id, x.url
    FROM msg JOIN input i ON i.id = msg.id
    JOIN unnest(p_extra_ns, p_extra_endpoint_ids, p_extra_urls) AS x (n, endpoint_id, url) ON x.n = i.n
    ON CONFLICT DO NOTHING
    RETURNING outbox_deliveries.tenant_id, outbox_deliveries.id, outbox_deliveries.message_id, outbox_deliveries.endpoint_id
  ), queued AS (
    INSERT INTO outbox_queue (tenant_id, delivery_id, endpoint_id) SELECT f.tenant_id, f.id, f.endpoint_id FROM fanout f
  ), counts AS (
    SELECT f.message_id, count(*)::int AS deliveries FROM fanout f GROUP BY f.message_id
  )
  SELECT i.n::int, msg.id, coalesce(c.deliveries, 0), false
  FROM msg JOIN input i ON i.id = msg.id LEFT JOIN counts c ON c.message_id = msg.id;
  IF FOUND THEN
    -- Only the extra destinations of messages inserted above (a repeat's are not used).
    IF cardinality(p_extra_endpoint_ids) > 0 THEN
      PERFORM tekil_outbox_require_tenant_endpoints(
        ARRAY(SELECT p_tenant_ids[x.n] FROM unnest(p_extra_ns, p_extra_endpoint_ids) WITH ORDINALITY AS x (n, endpoint_id, k)
              JOIN outbox_messages o ON o.tenant_id = p_tenant_ids[x.n] AND o.id = p_ids[x.n] ORDER BY x.k),
        ARRAY(SELECT x.endpoint_id FROM unnest(p_extra_ns, p_extra_endpoint_ids) WITH ORDINALITY AS x (n, endpoint_id, k)
              JOIN outbox_messages o ON o.tenant_id = p_tenant_ids[x.n] AND o.id = p_ids[x.n] ORDER BY x.k));
    END IF;
    IF pg_try_advisory_xact_lock(7628139, 1) THEN
      PERFORM pg_notify('tekil_outbox', '');
    END IF;
  END IF;
  RETURN QUERY
  SELECT k.n::int, o.id, 0, true
  FROM unnest(p_idempotency_keys) WITH ORDINALITY AS k (idempotency_key, n)
  JOIN outbox_messages o ON o.tenant_id = p_tenant_ids[k.n] AND o.idempotency_key = k.idempotency_key
  WHERE o.id <> p_ids[k.n];
END $fn$;

-- Tenants: one tenant per merchant of a provider that sends webhooks on its merchants' behalf. Every
-- endpoint and every message belongs to one; a message fans out to its own tenant's endpoints only.
--
-- A single-tenant installation sees no change: the tenant `default` is made here, every existing
-- endpoint and message moves to it, and both columns default to it.
CREATE TABLE tenants (
  -- The provider's own merchant id when it gives one (`m_123`), else generated (`ten_…`).
  id          text        PRIMARY KEY,
  name        text,
  metadata    jsonb       NOT NULL DEFAULT '{}'::jsonb,
  -- A disabled tenant's messages are kept (published, with their deliveries) and not sent: the
  -- dispatcher's claim passes over its endpoints until it is enabled again.
  disabled    boolean     NOT NULL DEFAULT false,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  -- Set when a confirmed delete starts: publishing refuses the tenant from then on, the delete removes
  -- its rows in batches (several transactions) and the tenant's own row last. A delete that stopped
  -- half way is finished by running it again.
  deleted_at  timestamptz
);
INSERT INTO tenants (id, name) VALUES ('default', 'Default tenant');

-- Endpoints are rarely written: a key to the tenant costs nothing on the hot paths (publishing reads
-- endpoints, it does not write them).
ALTER TABLE endpoints ADD COLUMN tenant_id text NOT NULL DEFAULT 'default' REFERENCES tenants (id);
-- The fan-out's lookup: one tenant's live endpoints, whatever the number of tenants.
CREATE INDEX endpoints_tenant ON endpoints (tenant_id) WHERE deleted_at IS NULL;

-- No foreign key here (see migration 012: every publisher would lock the same tenant row); the
-- publishing functions check the tenant themselves. The index serves a tenant's message list (newest
-- first) and the tenant's deletion.
ALTER TABLE outbox_messages ADD COLUMN tenant_id text NOT NULL DEFAULT 'default';
CREATE INDEX outbox_messages_tenant ON outbox_messages (tenant_id, id);

-- Publishing refuses a tenant that does not exist or is being deleted (no_data_found: the caller
-- answers NOT_FOUND), and an extra destination naming another tenant's endpoint (the error 012 gave
-- for an endpoint that does not exist: to this tenant it does not).
CREATE FUNCTION tekil_outbox_require_tenants(p_tenant_ids text[]) RETURNS void LANGUAGE plpgsql AS $fn$
DECLARE
  missing text;
BEGIN
  SELECT x.tenant_id INTO missing FROM unnest(p_tenant_ids) AS x (tenant_id)
  WHERE NOT EXISTS (SELECT 1 FROM tenants t WHERE t.id = x.tenant_id AND t.deleted_at IS NULL) LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'no tenant %', missing USING ERRCODE = 'no_data_found';
  END IF;
END $fn$;

CREATE FUNCTION tekil_outbox_require_tenant_endpoints(p_tenant_ids text[], p_endpoint_ids text[]) RETURNS void LANGUAGE plpgsql AS $fn$
BEGIN
  IF EXISTS (SELECT 1 FROM unnest(p_tenant_ids, p_endpoint_ids) AS x (tenant_id, endpoint_id)
             WHERE NOT EXISTS (SELECT 1 FROM endpoints e WHERE e.id = x.endpoint_id AND e.tenant_id = x.tenant_id)) THEN
    RAISE EXCEPTION 'an extra destination names an endpoint that does not exist' USING ERRCODE = 'foreign_key_violation';
  END IF;
END $fn$;

-- 013's functions, taking the tenant: the message records it and fans out to that tenant's endpoints
-- only (through endpoints_tenant). Still one statement per call.
DROP FUNCTION tekil_outbox_publish(text, text, text, bytea, text, text[], text[]);
DROP FUNCTION tekil_outbox_publish_many(text[], text[], text[], bytea, int[], int[], text[], int[], text[], text[]);

CREATE FUNCTION tekil_outbox_publish(p_tenant_id text, p_id text, p_event_type text, p_resource_id text, p_payload bytea,
                                     p_idempotency_key text, p_extra_endpoint_ids text[], p_extra_urls text[])
RETURNS TABLE (id text, deliveries int) LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
BEGIN
  PERFORM tekil_outbox_require_tenants(ARRAY[p_tenant_id]);
  RETURN QUERY
  WITH msg AS (
    INSERT INTO outbox_messages (id, tenant_id, event_type, resource_id, payload, idempotency_key)
    VALUES (p_id, p_tenant_id, p_event_type, p_resource_id, p_payload, p_idempotency_key)
    ON CONFLICT (idempotency_key) DO NOTHING
    RETURNING outbox_messages.id, outbox_messages.event_type
  ), fanout AS (
    INSERT INTO outbox_deliveries (message_id, endpoint_id, url)
    SELECT msg.id, e.id, NULL FROM msg JOIN endpoints e
      ON e.tenant_id = p_tenant_id AND e.enabled AND e.deleted_at IS NULL AND (
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
    PERFORM tekil_outbox_require_tenant_endpoints(array_fill(p_tenant_id, ARRAY[cardinality(p_extra_endpoint_ids)]), p_extra_endpoint_ids);
  END IF;
  IF pg_try_advisory_xact_lock(7628139, 1) THEN
    PERFORM pg_notify('tekil_outbox', '');
  END IF;
END $fn$;

CREATE FUNCTION tekil_outbox_publish_many(p_tenant_ids text[], p_ids text[], p_event_types text[], p_resource_ids text[], p_payloads bytea,
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
    ON CONFLICT (idempotency_key) DO NOTHING
    RETURNING outbox_messages.id, outbox_messages.tenant_id, outbox_messages.event_type
  ), fanout AS (
    INSERT INTO outbox_deliveries (message_id, endpoint_id, url)
    SELECT msg.id, e.id, NULL FROM msg JOIN endpoints e
      ON e.tenant_id = msg.tenant_id AND e.enabled AND e.deleted_at IS NULL AND (
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
      PERFORM tekil_outbox_require_tenant_endpoints(
        ARRAY(SELECT p_tenant_ids[x.n] FROM unnest(p_extra_ns, p_extra_endpoint_ids) WITH ORDINALITY AS x (n, endpoint_id, k)
              JOIN outbox_messages o ON o.id = p_ids[x.n] ORDER BY x.k),
        ARRAY(SELECT x.endpoint_id FROM unnest(p_extra_ns, p_extra_endpoint_ids) WITH ORDINALITY AS x (n, endpoint_id, k)
              JOIN outbox_messages o ON o.id = p_ids[x.n] ORDER BY x.k));
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

-- Publishing one message costs the same with 20,000 tenants as with one.
--
-- Postgres keeps a plan per statement of a plpgsql function, and after five calls it chooses between
-- one generic plan and planning anew on every call (a custom plan) by comparing their estimated costs.
-- 016's tenant check, tekil_outbox_require_tenants(ARRAY[p_tenant_id]), reads `unnest($1)`, which a
-- generic plan estimates at ten rows. With a handful of tenants that is a seq scan of a tiny table and
-- the generic plan wins; with 20,000 tenants it is ten index probes against the custom plan's one, and
-- the custom plan won: the check was planned again on every publish, about 80 µs of Postgres CPU a
-- message on a 2-core machine (docs/performance.md, bench:tenants), the whole of the gap between one
-- tenant and 20,000. The extra destinations' check had the same shape against 40,000 endpoints.
--
-- Here the one-message function checks its tenant and its extra destinations with statements that
-- compare a column with one value (a primary key probe whatever the number of tenants), whose generic
-- plan is the custom one: planned once per connection, as the fan-out statement already was. The
-- checks, their errors and everything the function writes are unchanged. tekil_outbox_publish_many
-- keeps the array checks: it runs them once for a whole batch, where planning once costs nothing.
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

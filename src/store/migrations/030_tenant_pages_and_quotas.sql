-- One tenant's history pages read one page whatever the statistics; tenants carry their own quotas.
--
-- A tenant's newest deliveries (the portal's list, `GET /api/v1/deliveries?tenant_id=`, and every
-- open event stream's poll) are the first rows of the delivery key (tenant_id, id) read backwards.
-- Left to choose, the planner did that only when its estimates said so, and they were wrong both ways:
-- - on tables never analyzed (a Postgres with autovacuum off, and PGlite) it guesses a tenant has 0.5 %
--   of the table; once a page's limit passed that guess it read the tenant's every row through a bitmap,
--   sorted them, and joined the whole history to the endpoints (33,324 rows for a page of 200, 33 ms);
-- - with statistics it walked the narrower id-only index newest first and dropped other tenants' rows
--   until the page was full (a tenant behind 60,000 newer rows of another: 12 ms a page).
-- These functions choose the page's ids with the only plan that reads one page: the key walked
-- backwards, by an index condition the id-only index cannot serve (a closed range on tenant_id keeps the
-- tenant from being folded into a constant, so only the key yields the order) and with sorting priced
-- out, so no estimate can make reading the whole tenant and sorting it look cheaper. The cursor is an
-- index condition too (coalesce: no OR to fold), so a later page starts where the last one ended.
-- Filters are checked row by row along the key, as before. The callers then look each id up by its
-- whole key (src/store/sql/outbox/tenant-history.ts).
CREATE FUNCTION tekil_outbox_tenant_delivery_page(p_tenant_id text, p_before_id bigint, p_endpoint_id text, p_status text,
                                                  p_since timestamptz, p_until timestamptz, p_event_type text, p_resource_id text,
                                                  p_limit int)
RETURNS TABLE (id bigint) LANGUAGE sql STABLE
SET enable_sort = off
AS $fn$
  -- The tenant's key, or with an endpoint filter the endpoint's key (endpoint_id, id) the same way:
  -- each branch runs only when its one-time filter holds.
  (SELECT d.id FROM outbox_deliveries d
   WHERE $3::text IS NULL
     AND d.tenant_id >= $1 AND d.tenant_id <= $1
     AND d.id < coalesce($2, 9223372036854775807)
     AND ($4::text IS NULL OR d.status = $4)
     AND ($5::timestamptz IS NULL OR d.created_at >= $5)
     AND ($6::timestamptz IS NULL OR d.created_at < $6)
     AND ($7::text IS NULL AND $8::text IS NULL OR EXISTS (
       SELECT 1 FROM outbox_messages m WHERE m.tenant_id = d.tenant_id AND m.id = d.message_id
         AND ($7::text IS NULL OR m.event_type = $7)
         AND ($8::text IS NULL OR m.resource_id = $8)))
   ORDER BY d.tenant_id DESC, d.id DESC
   LIMIT $9)
  UNION ALL
  (SELECT d.id FROM outbox_deliveries d
   WHERE $3::text IS NOT NULL
     AND d.endpoint_id >= $3 AND d.endpoint_id <= $3 AND d.tenant_id = $1
     AND d.id < coalesce($2, 9223372036854775807)
     AND ($4::text IS NULL OR d.status = $4)
     AND ($5::timestamptz IS NULL OR d.created_at >= $5)
     AND ($6::timestamptz IS NULL OR d.created_at < $6)
     AND ($7::text IS NULL AND $8::text IS NULL OR EXISTS (
       SELECT 1 FROM outbox_messages m WHERE m.tenant_id = d.tenant_id AND m.id = d.message_id
         AND ($7::text IS NULL OR m.event_type = $7)
         AND ($8::text IS NULL OR m.resource_id = $8)))
   ORDER BY d.endpoint_id DESC, d.id DESC
   LIMIT $9)
$fn$;

-- The same for a tenant's messages: the message key (tenant_id, id) backwards, never the id-only index.
-- Every message id starts with 'evt_' (src/outbox/ids.ts), so 'evu' sorts after all of them in any collation.
CREATE FUNCTION tekil_outbox_tenant_message_page(p_tenant_id text, p_before_id text, p_event_type text, p_resource_id text,
                                                 p_since timestamptz, p_until timestamptz, p_endpoint_id text, p_status text,
                                                 p_limit int)
RETURNS TABLE (id text) LANGUAGE sql STABLE
SET enable_sort = off
AS $fn$
  SELECT m.id FROM outbox_messages m
  WHERE m.tenant_id >= $1 AND m.tenant_id <= $1
    AND m.id < coalesce($2, 'evu')
    AND ($3::text IS NULL OR m.event_type = $3)
    AND ($4::text IS NULL OR m.resource_id = $4)
    AND ($5::timestamptz IS NULL OR m.created_at >= $5)
    AND ($6::timestamptz IS NULL OR m.created_at < $6)
    AND ($7::text IS NULL AND $8::text IS NULL OR EXISTS (
      SELECT 1 FROM outbox_deliveries d WHERE d.tenant_id = m.tenant_id AND d.message_id = m.id
        AND ($7::text IS NULL OR d.endpoint_id = $7) AND ($8::text IS NULL OR d.status = $8)))
  ORDER BY m.tenant_id DESC, m.id DESC
  LIMIT $9
$fn$;

-- A tenant's own quotas (endpoints, tokens, secrets, event streams): a key present overrides the
-- configured default (`tenants.quotas`), null in a key or no key keeps it. A provider's plans differ.
ALTER TABLE tenants ADD COLUMN quotas jsonb NOT NULL DEFAULT '{}'::jsonb
  CONSTRAINT tenants_quotas_object CHECK (jsonb_typeof(quotas) = 'object');

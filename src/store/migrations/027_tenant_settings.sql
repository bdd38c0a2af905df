-- Per-tenant settings (docs/tenants.md, "A tenant's own settings") and the circuit breaker as a guest
-- of the ladder (docs/sending.md, "The circuit breaker").
--
-- A tenant may carry defaults for its endpoints. NULL in each of these columns means "no default of
-- its own": its endpoints take the file's (sending.* in tekil.yaml).
--   ladder                  a preset name or a list of gaps, as an endpoint's ladder
--   timeout_ms              an endpoint's timeout
--   rate_limit              an endpoint's rate limit ("20/s")
--   endpoint_max_in_flight  an endpoint's max_in_flight (each endpoint's own cap, not the tenant's)
--   event_id_mode           an endpoint's event_id ('message' or 'delivery')
ALTER TABLE tenants ADD COLUMN ladder jsonb;
ALTER TABLE tenants ADD COLUMN timeout_ms integer;
ALTER TABLE tenants ADD COLUMN rate_limit text;
ALTER TABLE tenants ADD COLUMN endpoint_max_in_flight integer;
ALTER TABLE tenants ADD COLUMN event_id_mode text CONSTRAINT tenants_event_id_mode_check CHECK (event_id_mode IN ('message', 'delivery'));
-- The tenant-wide cap on requests in flight (NULL: sending.tenant_max_in_flight) and its weight in the
-- claim's round over tenants: the dispatcher's fair claim reads them. Also made by migration 026, so
-- either may come first.
ALTER TABLE tenants ADD COLUMN IF NOT EXISTS max_in_flight integer;
ALTER TABLE tenants ADD COLUMN IF NOT EXISTS weight integer NOT NULL DEFAULT 1;

-- An endpoint's columns keep holding the value it is sent with (the claim reads them as before, with no
-- join to its tenant on the hot path). own_settings names the ones set on the endpoint itself; every
-- other one is its tenant's default, else the file's, and is written again whenever the tenant's
-- default changes (src/store/sql/outbox/inherited-settings.ts). Endpoints made before this migration
-- cannot tell a value they were given from the file's default copied into them, so they keep every
-- value as their own; `PATCH /api/v1/endpoints/:id {"inherit": [...]}` hands one back to the tenant.
ALTER TABLE endpoints ADD COLUMN own_settings text[] NOT NULL DEFAULT ARRAY['ladder', 'timeout', 'max_in_flight', 'rate_limit', 'event_id'];

-- The breaker's hold (src/store/sql/outbox/breaker-hold.ts) looks only at endpoints whose breaker is
-- open: probe_at is set exactly while it is.
CREATE INDEX endpoints_breaker_open ON endpoints (id) WHERE probe_at IS NOT NULL;

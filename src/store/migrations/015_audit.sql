-- The audit trail: one row per change asked of the admin API (and per refused sign-in), written by the
-- api role once the answer is decided. Append-only: no route updates or deletes a row; only retention
-- ages rows out, past `retention.audit` (never less than 90 days). `tenant_id` is empty until tekil
-- serves tenants.
CREATE TABLE audit_events (
  id         bigserial PRIMARY KEY,
  at         timestamptz NOT NULL DEFAULT now(),
  actor      text NOT NULL,
  role       text,
  tenant_id  text,
  address    text,
  method     text NOT NULL,
  route      text NOT NULL,
  target     jsonb NOT NULL DEFAULT '{}',
  status     integer NOT NULL,
  error_code text
);
-- The list reads newest first by (at, id), filtered or not; the sweeper deletes from the oldest.
CREATE INDEX audit_events_at ON audit_events (at, id);
CREATE INDEX audit_events_actor ON audit_events (actor, at, id);

-- The event catalogue (docs/event-types.md): the types a provider declares, each with a JSON Schema
-- (2020-12) its messages' `data` is checked against, an example, and who may read it.
--
-- `schema` and `example` are json, not jsonb: the merchant reads them in the portal as the provider
-- wrote them, properties in their own order. `version` counts changes of the schema, so a process keeps
-- one compiled validator per (name, version) and a change reaches it without a restart.
-- `tenant_ids` NULL: every tenant reads the type; a list: only those tenants (and operators) do.
CREATE TABLE event_types (
  name        text PRIMARY KEY,
  description text NOT NULL DEFAULT '',
  schema      json,
  example     json,
  deprecated  boolean NOT NULL DEFAULT false,
  tenant_ids  text[],
  version     integer NOT NULL DEFAULT 1,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);

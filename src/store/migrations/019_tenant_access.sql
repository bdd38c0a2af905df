-- Tenant-scoped access (docs/tenants.md): a merchant sees its own tenant and nothing else.

-- Bearer tokens of one tenant, for a provider's backend or a merchant's own scripts. As with operator
-- tokens, only a SHA-256 is kept; the token is shown once. `prefix` (the first characters) lets a list
-- tell tokens apart without holding anything that signs in.
CREATE TABLE tenant_tokens (
  id           text        PRIMARY KEY,
  tenant_id    text        NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  name         text,
  role         text        NOT NULL CHECK (role IN ('viewer', 'operator')),
  hash         text        NOT NULL UNIQUE,
  prefix       text        NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  revoked_at   timestamptz,
  last_used_at timestamptz
);
CREATE INDEX tenant_tokens_tenant ON tenant_tokens (tenant_id, created_at);

-- One-time links into the merchant portal: the provider's backend makes one when a merchant clicks
-- "Webhooks" in its panel. Opening it (once, before expires_at) sets `used_at` and opens a session.
CREATE TABLE portal_links (
  id         text        PRIMARY KEY,
  tenant_id  text        NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  role       text        NOT NULL CHECK (role IN ('viewer', 'operator')),
  hash       text        NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  used_at    timestamptz
);
CREATE INDEX portal_links_expires ON portal_links (expires_at);

-- A session of a tenant (opened by a portal link, or by signing in with a tenant token) sees that
-- tenant only. One opened with a tenant token ends when the token is revoked, as an operator's does.
ALTER TABLE dashboard_sessions ADD COLUMN tenant_id text REFERENCES tenants (id) ON DELETE CASCADE;
ALTER TABLE dashboard_sessions ADD COLUMN tenant_token_id text REFERENCES tenant_tokens (id) ON DELETE CASCADE;

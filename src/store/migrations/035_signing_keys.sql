-- Ed25519 signing keys (Standard Webhooks `v1a`, docs/signing.md "Ed25519"): one live key pair per
-- tenant, and during a rotation the previous ones until their window ends. The secret key is sealed as
-- endpoint secrets are (AES-256-GCM under TEKIL_SECRET_KEY); the public key is what the tenant's JWKS
-- document lists. kid is the key's RFC 7638 thumbprint, so anyone holding the public key computes it.
CREATE TABLE tenant_signing_keys (
  tenant_id      text        NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  kid            text        NOT NULL,
  public_key     text        NOT NULL,
  secret_key_enc text        NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now(),
  -- NULL: the current key. Set by a rotation: the key signs beside the new one until then.
  expires_at     timestamptz,
  PRIMARY KEY (tenant_id, kid)
);

-- What an endpoint's requests carry: `v1` (HMAC with its secret, the default), `v1a` (Ed25519 with its
-- tenant's key) or `both` (a migration from one to the other). Only the `standard` scheme has v1a.
ALTER TABLE endpoints ADD COLUMN signing text NOT NULL DEFAULT 'v1'
  CONSTRAINT endpoints_signing_check CHECK (signing IN ('v1', 'v1a', 'both'));

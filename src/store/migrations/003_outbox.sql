-- Sending side: endpoints, the transactional outbox, per-destination deliveries and every attempt.

CREATE TABLE endpoints (
  id                   text        PRIMARY KEY,
  url                  text        NOT NULL,
  description          text,
  -- Exact types or `prefix.*` patterns; empty means every type.
  event_types          text[]      NOT NULL DEFAULT '{}',
  -- A preset name ("standard") or a JSON list of gaps (["30s", "2m"]).
  ladder               jsonb       NOT NULL DEFAULT '"standard"'::jsonb,
  timeout_ms           integer     NOT NULL,
  max_in_flight        integer     NOT NULL,
  scheme               text        NOT NULL DEFAULT 'standard',
  enabled              boolean     NOT NULL DEFAULT true,
  disabled_reason      text,
  consecutive_failures integer     NOT NULL DEFAULT 0,
  created_at           timestamptz NOT NULL DEFAULT now(),
  updated_at           timestamptz NOT NULL DEFAULT now(),
  -- Deleted endpoints are kept so their delivery history stays readable.
  deleted_at           timestamptz
);

-- Secrets are stored encrypted (AES-256-GCM). The current one has no expiry; a rotated-out one signs
-- alongside the new one until expires_at.
CREATE TABLE endpoint_secrets (
  id           bigserial   PRIMARY KEY,
  endpoint_id  text        NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
  secret_enc   text        NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz
);
CREATE INDEX endpoint_secrets_endpoint ON endpoint_secrets (endpoint_id);

CREATE TABLE outbox_messages (
  id              text        PRIMARY KEY,
  event_type      text        NOT NULL,
  resource_id     text,
  -- The exact bytes every destination receives.
  payload         bytea       NOT NULL,
  idempotency_key text        UNIQUE,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX outbox_messages_type ON outbox_messages (event_type, id);
CREATE INDEX outbox_messages_resource ON outbox_messages (resource_id, id);
CREATE INDEX outbox_messages_created ON outbox_messages (created_at);

-- One row per message and destination. `url` is set for a per-message extra destination, which is
-- signed and retried with the settings of `endpoint_id`.
-- While status is 'sending', next_attempt_at is the lease's end: a dispatcher that dies mid-send
-- leaves the row due again once its lease runs out. `lease` is set only together with status 'sending'
-- and cleared by every change away from it: recording an attempt matches on it alone.
CREATE TABLE outbox_deliveries (
  id               bigserial   PRIMARY KEY,
  message_id       text        NOT NULL REFERENCES outbox_messages (id) ON DELETE CASCADE,
  endpoint_id      text        NOT NULL REFERENCES endpoints (id),
  url              text,
  status           text        NOT NULL DEFAULT 'pending'
                   CHECK (status IN ('pending', 'sending', 'succeeded', 'failed', 'cancelled')),
  attempts         integer     NOT NULL DEFAULT 0,
  -- Ladder position restarts here on a manual replay; attempts keep counting for the history.
  ladder_base      integer     NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz NOT NULL DEFAULT now(),
  lease            text,
  last_status_code integer,
  last_error       text,
  last_attempt_at  timestamptz,
  created_at       timestamptz NOT NULL DEFAULT now(),
  completed_at     timestamptz
);
CREATE UNIQUE INDEX outbox_deliveries_destination ON outbox_deliveries (message_id, endpoint_id, coalesce(url, ''));
-- The claim: due rows per endpoint in time order. Finished rows leave the index.
CREATE INDEX outbox_deliveries_due ON outbox_deliveries (endpoint_id, next_attempt_at)
  WHERE status IN ('pending', 'sending');
-- The in-flight count per endpoint (the cap).
CREATE INDEX outbox_deliveries_in_flight ON outbox_deliveries (endpoint_id, next_attempt_at)
  WHERE status = 'sending';
-- History lists by endpoint, and failed deliveries for bulk replay. Every status change rewrites the
-- row's entry in each full index, so the dispatcher's path keeps as few of them as it can.
CREATE INDEX outbox_deliveries_endpoint ON outbox_deliveries (endpoint_id, id);
CREATE INDEX outbox_deliveries_failed ON outbox_deliveries (id) WHERE status = 'failed';

CREATE TABLE outbox_attempts (
  id            bigserial   PRIMARY KEY,
  delivery_id   bigint      NOT NULL REFERENCES outbox_deliveries (id) ON DELETE CASCADE,
  message_id    text        NOT NULL,
  endpoint_id   text        NOT NULL,
  attempt       integer     NOT NULL,
  url           text        NOT NULL,
  started_at    timestamptz NOT NULL,
  duration_ms   integer     NOT NULL,
  succeeded     boolean     NOT NULL,
  status_code   integer,
  error         text,
  -- The first 4 KiB of the answer, as text.
  response_body text,
  dispatcher    text
);
CREATE INDEX outbox_attempts_delivery ON outbox_attempts (delivery_id, attempt);

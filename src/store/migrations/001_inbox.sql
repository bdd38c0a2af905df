-- Receiving side: every delivery a provider made, keyed by the provider's delivery id.
-- The raw body is stored byte for byte; headers keep only a non-secret subset.
CREATE TABLE inbox_deliveries (
  source          text        NOT NULL,
  event_id        text        NOT NULL,
  resource_id     text,
  event_type      text,
  occurred_at     timestamptz,
  body            bytea       NOT NULL,
  content_type    text,
  headers         jsonb       NOT NULL DEFAULT '{}'::jsonb,
  received_at     timestamptz NOT NULL DEFAULT now(),
  status          text        NOT NULL DEFAULT 'pending'
                  CHECK (status IN ('pending', 'processing', 'done', 'stale', 'dead')),
  attempts        integer     NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  locked_until    timestamptz,
  last_error      text,
  processed_at    timestamptz,
  result_ref      text,
  PRIMARY KEY (source, event_id)
);

CREATE INDEX inbox_deliveries_resource ON inbox_deliveries (source, resource_id);
CREATE INDEX inbox_deliveries_received ON inbox_deliveries (received_at);

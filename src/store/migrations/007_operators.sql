-- Named operator tokens with a role, for the admin API and the dashboard. Only a SHA-256 of each token
-- is kept: the token itself is shown once, when it is made. The admin token (TEKIL_ADMIN_TOKEN) is not
-- stored here; it stays the superuser.
CREATE TABLE operators (
  id           text PRIMARY KEY,
  name         text NOT NULL,
  role         text NOT NULL CHECK (role IN ('viewer', 'operator')),
  token_hash   text NOT NULL UNIQUE,
  created_at   timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  revoked_at   timestamptz
);
-- One live operator per name, so `revoke NAME` means one token; a revoked name can be reused.
CREATE UNIQUE INDEX operators_live_name ON operators (name) WHERE revoked_at IS NULL;

-- Browser sessions: the cookie holds a random id, of which only a SHA-256 is kept. A session made with
-- the admin token has no operator; one made with an operator's token ends when the operator is revoked.
CREATE TABLE dashboard_sessions (
  id_hash     text PRIMARY KEY,
  operator_id text REFERENCES operators (id) ON DELETE CASCADE,
  role        text NOT NULL CHECK (role IN ('viewer', 'operator', 'admin')),
  csrf_token  text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz NOT NULL
);
CREATE INDEX dashboard_sessions_expires ON dashboard_sessions (expires_at);

-- The dashboard's outbound stats read the attempts of a recent window.
CREATE INDEX outbox_attempts_started ON outbox_attempts (started_at);

-- Bulk replay or discard by filter, run in the background by the api role that took the request.
-- `cancel_requested` is read between batches; `heartbeat_at` shows a runner is alive (a job whose
-- runner stopped keeps its last progress, and is shown as abandoned).
CREATE TABLE dashboard_jobs (
  id               text PRIMARY KEY,
  kind             text NOT NULL CHECK (kind IN ('inbox.replay', 'inbox.discard')),
  filter           jsonb NOT NULL,
  status           text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'done', 'cancelled', 'failed')),
  total            integer NOT NULL,
  processed        integer NOT NULL DEFAULT 0,
  changed          integer NOT NULL DEFAULT 0,
  skipped          integer NOT NULL DEFAULT 0,
  error            text,
  created_by       text NOT NULL,
  cancel_requested boolean NOT NULL DEFAULT false,
  created_at       timestamptz NOT NULL DEFAULT now(),
  heartbeat_at     timestamptz NOT NULL DEFAULT now(),
  finished_at      timestamptz
);

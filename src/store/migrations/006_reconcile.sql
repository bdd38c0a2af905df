-- Reconcile: every run against a provider's own API, and every difference it found.
--
-- A run is stored before it lists anything and updated after each page, so an interrupted run leaves
-- its cursor behind and the next one resumes from it instead of starting over.
CREATE TABLE reconcile_runs (
  id            bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  source        text        NOT NULL,
  provider      text        NOT NULL,
  -- The window asked for: provider changes from window_start up to window_end (open when null).
  window_start  timestamptz NOT NULL,
  window_end    timestamptz,
  apply         boolean     NOT NULL,
  -- Who started it: 'cli', 'schedule' (tekil start) or 'api' (POST /api/v1/reconcile/runs).
  trigger       text        NOT NULL,
  status        text        NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'completed', 'failed')),
  -- The provider's cursor after the last page this run finished; null before the first page.
  cursor        text,
  pages         integer     NOT NULL DEFAULT 0,
  items         integer     NOT NULL DEFAULT 0,
  error         text,
  -- A run resumed after a failure keeps its id; resumed counts how often.
  resumed       integer     NOT NULL DEFAULT 0,
  started_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now(),
  finished_at   timestamptz
);
CREATE INDEX reconcile_runs_source ON reconcile_runs (source, id);

-- One row per difference. Nothing is corrected without one: `action` says what was done about it.
CREATE TABLE reconcile_findings (
  id             bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  run_id         bigint      NOT NULL REFERENCES reconcile_runs (id) ON DELETE CASCADE,
  source         text        NOT NULL,
  kind           text        NOT NULL CHECK (kind IN ('missing', 'unprocessed', 'state', 'extra')),
  resource_id    text,
  -- The delivery concerned: the provider's event id, the synthetic id recorded, or tekil's own.
  event_id       text,
  provider_state text,
  tekil_state    text,
  -- none (reported only), recorded (a delivery was recorded), listed (left for replay), redelivered.
  action         text        NOT NULL CHECK (action IN ('none', 'recorded', 'listed', 'redelivered')),
  detail         text,
  created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX reconcile_findings_run ON reconcile_findings (run_id, id);
CREATE INDEX reconcile_findings_source_kind ON reconcile_findings (source, kind, id);

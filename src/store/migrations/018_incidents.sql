-- Alerts: one row per problem (src/alerts/). A rule names the kind of problem (endpoint_failing,
-- review_queue, …), the subject which one (an endpoint id, a source, `dispatcher`). The partial
-- unique index makes "one open incident per problem" a fact of the store, not of the evaluator: a
-- second evaluator (another process, a retry) that tries to open the same incident inserts nothing.
CREATE TABLE incidents (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  rule text NOT NULL,
  subject text NOT NULL,
  opened_at timestamptz NOT NULL DEFAULT now(),
  closed_at timestamptz,
  last_value double precision,
  details jsonb NOT NULL DEFAULT '{}'::jsonb
);

CREATE UNIQUE INDEX incidents_one_open ON incidents (rule, subject) WHERE closed_at IS NULL;
-- The panel's and the API's list: newest first.
CREATE INDEX incidents_opened ON incidents (opened_at DESC, id DESC);

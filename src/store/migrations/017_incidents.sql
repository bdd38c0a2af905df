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

-- Signature failures per source and minute, for the signature_failures rule: each receiving process
-- counts them in memory and adds its counts here every few seconds (one statement per flush, not one
-- per request), so the evaluator sees every process's. Rows past a day are deleted by the evaluator.
CREATE TABLE signature_failures (
  source text NOT NULL,
  minute timestamptz NOT NULL,
  failures integer NOT NULL,
  PRIMARY KEY (source, minute)
);

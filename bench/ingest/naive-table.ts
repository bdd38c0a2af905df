// The hand-written receiver's own table (bench:ingest's naive line, bench:peers' insert peer): the columns
// tekil keeps of an inbound webhook, the same unique (source, event_id), and nothing else: no trigger, no
// NOTIFY, no queue table beside it. Created by the bench before the server starts.
export const NAIVE_TABLE = 'naive_inbox';

export const NAIVE_TABLE_SQL = `
CREATE TABLE IF NOT EXISTS ${NAIVE_TABLE} (
  source text NOT NULL,
  event_id text NOT NULL,
  resource_id text,
  event_type text,
  occurred_at timestamptz,
  body bytea NOT NULL,
  content_type text,
  headers jsonb,
  received_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (source, event_id)
)`;

/** A named statement: node-postgres prepares it once per connection, then sends only its parameters. */
export const NAIVE_INSERT = {
  name: 'naive_insert',
  text: `INSERT INTO ${NAIVE_TABLE} (source, event_id, resource_id, event_type, occurred_at, body, content_type, headers)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (source, event_id) DO NOTHING RETURNING event_id`,
} as const;

-- The simulated provider's invoices (`tekil simulate`): what its list API serves and what its events
-- announce. Kept apart from the outbox that announces them, as a provider keeps its own records.
-- IF NOT EXISTS: stores that ran the simulator before this migration already hold the table.
CREATE TABLE IF NOT EXISTS sim_invoices (
  id           text        PRIMARY KEY,
  order_id     text,
  status       text        NOT NULL,
  amount       text        NOT NULL,
  paid_amount  text        NOT NULL,
  currency     text        NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS sim_invoices_status ON sim_invoices (status, id);

-- Endpoints signing with the generic `hmac` scheme keep its description (header, algorithm,
-- encoding, …) here; null for every other scheme.
ALTER TABLE endpoints ADD COLUMN scheme_options jsonb;

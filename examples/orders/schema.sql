-- The example shop's own tables, created by the application (not by tekil's migrations).
CREATE TABLE IF NOT EXISTS example_orders (
  id            text        PRIMARY KEY,
  amount_minor  bigint      NOT NULL,
  currency      text        NOT NULL,
  status        text        NOT NULL DEFAULT 'awaiting_payment',
  paid_at       timestamptz,
  paid_by_event text
);

-- Every business effect the shop performs, one row each: "exactly one effect" is counted here.
CREATE TABLE IF NOT EXISTS example_ledger (
  id         bigserial   PRIMARY KEY,
  order_id   text        NOT NULL,
  event_id   text        NOT NULL,
  kind       text        NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Invoices that come without an order (top-ups): their state, and how many times the shop credited
-- the customer for one (the business effect `tekil prove` counts through GET /_prove/effects).
CREATE TABLE IF NOT EXISTS example_invoices (
  id             text        PRIMARY KEY,
  status         text        NOT NULL,
  paid_effects   integer     NOT NULL DEFAULT 0,
  updated_at     timestamptz NOT NULL DEFAULT now()
);

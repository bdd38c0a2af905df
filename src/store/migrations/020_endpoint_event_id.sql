-- Which event id an endpoint's receivers see (docs/sending.md, "Event ids"):
--   message:  the message's id, the same at every endpoint (Standard Webhooks' webhook-id);
--   delivery: one id per delivery, so two endpoints of one message see two ids.
-- A delivery's own id is not stored: it is derived when the request is signed, from the message id and
-- the delivery id (src/outbox/ids.ts, deliveryEventId), which every claim already returns. It is the
-- same in every retry and replay of that delivery, and publishing writes nothing more for it.
ALTER TABLE endpoints ADD COLUMN event_id text NOT NULL DEFAULT 'message'
  CONSTRAINT endpoints_event_id_check CHECK (event_id IN ('message', 'delivery'));

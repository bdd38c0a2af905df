-- Tracing (docs/tracing.md): the W3C traceparent of the span that published a message, so each
-- dispatch attempt's span joins the publisher's trace. Written only while tracing is on (in the
-- publishing transaction, by a heap-only update: no index names it); null otherwise.
ALTER TABLE outbox_messages ADD COLUMN traceparent text;

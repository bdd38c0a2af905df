-- Erasure of a person's data (docs/erasure.md): the body and headers of an inbound delivery, or the
-- payload of an outbound message (with the answers kept on its attempts), are emptied on request, and
-- the time is kept. The record stays as a tombstone: its (source, event_id) still deduplicates, and a
-- replay is refused with ERASED rather than sending empty bytes. Erasure also sets trimmed_at, so
-- everything that already skips a body removed by retention skips an erased one too.
ALTER TABLE inbox_deliveries ADD COLUMN erased_at timestamptz;
ALTER TABLE outbox_messages ADD COLUMN erased_at timestamptz;

-- The attempt that settles a delivery (done, stale or dead) is kept on the delivery's record instead of
-- as a row of its own: completing a delivery then writes one record (a HOT update) and no history row
-- with its two index entries. Every other attempt (retried, lost, and a settling attempt that a replay
-- superseded) is a row of inbox_attempt_history, as before. The view inbox_attempts shows both, one
-- row per attempt, with the columns the table had.
ALTER TABLE inbox_attempts RENAME TO inbox_attempt_history;
ALTER INDEX inbox_attempts_delivery RENAME TO inbox_attempt_history_delivery;

-- The settling attempt: its number is `attempts`, its start `last_attempt_at`, its error `last_error`
-- (none when it succeeded). NULL while the delivery is not settled.
ALTER TABLE inbox_deliveries
  ADD COLUMN final_outcome     text CHECK (final_outcome IN ('done', 'stale', 'dead')),
  ADD COLUMN final_worker      text,
  ADD COLUMN final_duration_ms integer;

-- `id` orders a delivery's attempts; the settling attempt, always the last, has none (NULLs sort last).
CREATE VIEW inbox_attempts AS
SELECT h.id, h.source, h.event_id, h.attempt, h.worker, h.started_at, h.finished_at, h.duration_ms, h.outcome, h.error
FROM inbox_attempt_history h
UNION ALL
SELECT NULL::bigint, d.source, d.event_id, d.attempts, d.final_worker, d.last_attempt_at,
       d.last_attempt_at + d.final_duration_ms * interval '1 millisecond', d.final_duration_ms, d.final_outcome,
       CASE WHEN d.final_outcome <> 'done' THEN d.last_error END
FROM inbox_deliveries d
WHERE d.final_outcome IS NOT NULL;

-- Completing a delivery writes every row of a batch in one transaction, and each new version carries
-- the settling attempt (about 50 bytes more than the row as received). For a HOT update all of them need
-- room on their page at once; 50% free space is not enough for small bodies, 60% is.
ALTER TABLE inbox_deliveries SET (fillfactor = 40);

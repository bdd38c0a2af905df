-- Retention: settled deliveries lose their bodies after one age and their records after another.
--
-- A trimmed delivery keeps its row (the id is the tombstone that keeps a provider's late retry a
-- duplicate) with an empty body and no headers; trimmed_at says when and why the body is gone.
-- Adding a nullable column without a default rewrites nothing, however large the table.
ALTER TABLE inbox_deliveries ADD COLUMN trimmed_at timestamptz;
ALTER TABLE outbox_messages ADD COLUMN trimmed_at timestamptz;

-- The sweeper finds what is left to trim, oldest first, without reading past the rows already trimmed
-- (after a year those are most of the table). Partial: a trimmed row leaves the index, and a row's
-- received_at never changes, so processing's updates stay heap-only (HOT).
CREATE INDEX inbox_deliveries_untrimmed ON inbox_deliveries (received_at) WHERE trimmed_at IS NULL;
CREATE INDEX outbox_messages_untrimmed ON outbox_messages (created_at) WHERE trimmed_at IS NULL;

-- Autovacuum on the hot tables. The defaults (vacuum when 20% of a table is dead, analyze at 10%)
-- suit tables of a few thousand rows; on a table of 10 million rows they wait for 2 million dead
-- rows, so each run is long and the bloat in between is large. Scale factors of 1–2% with a fixed
-- floor make runs small and frequent; a cost limit above the default lets each finish quickly.
-- inbox_deliveries: every settled delivery is one HOT update, every swept row one dead tuple.
ALTER TABLE inbox_deliveries SET (
  autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 10000,
  autovacuum_analyze_scale_factor = 0.02, autovacuum_vacuum_insert_scale_factor = 0.05,
  autovacuum_vacuum_cost_limit = 2000);
-- inbox_queue: small but churned (an insert, a claim, a delete per delivery): vacuum it after a fixed
-- number of dead rows, not a share of a size that swings between zero and millions, so the claim's
-- index scans do not wade through dead entries; analyze it often, the claim's plan depends on it.
ALTER TABLE inbox_queue SET (
  autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 5000,
  autovacuum_analyze_scale_factor = 0, autovacuum_analyze_threshold = 5000,
  autovacuum_vacuum_cost_limit = 2000);
ALTER TABLE inbox_attempt_history SET (
  autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.05,
  autovacuum_vacuum_insert_scale_factor = 0.05);
-- outbox_deliveries: each attempt updates its row (pending → sending → succeeded), so it churns like a queue.
ALTER TABLE outbox_deliveries SET (
  autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 10000,
  autovacuum_analyze_scale_factor = 0.02, autovacuum_vacuum_insert_scale_factor = 0.05,
  autovacuum_vacuum_cost_limit = 2000);
ALTER TABLE outbox_messages SET (
  autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.05,
  autovacuum_vacuum_insert_scale_factor = 0.05);
ALTER TABLE outbox_attempts SET (
  autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.05,
  autovacuum_vacuum_insert_scale_factor = 0.05);

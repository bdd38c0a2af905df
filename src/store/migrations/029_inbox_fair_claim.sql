-- The worker's claim goes round the sources that have due work (src/store/sql/inbox/claim-due-deliveries.ts):
-- a source flooding 100,000 deliveries gets its share of each claim, not every claim until its backlog
-- drains. The claim finds the next source with queued rows by one probe of this index (a loose index
-- scan), and a source's due rows in time order from the same index, so it replaces the index on
-- next_attempt_at alone: one index for the queue's inserts and deletes to keep, as before.
--
-- Source first also suits a queue distributed by source (docs/deploy.md).
CREATE INDEX inbox_queue_source_due ON inbox_queue (source, next_attempt_at) WHERE NOT dead;
DROP INDEX inbox_queue_due;

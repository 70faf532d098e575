-- 0002_lean_instance_indexes: fewer task_instance index entries rewritten per state change.
--
-- Why: an instance changes state about three times (PENDING -> DISPATCHED -> RUNNING ->
-- SUCCESS) and every UPDATE moves `updated_at`; each secondary index holding `state` or
-- `updated_at` is rewritten (delete-mark + insert) on each of those writes, and that index
-- maintenance is what bounds the broker's throughput on MySQL's CPU. This file drops the two
-- such indexes whose queries another index serves, takes `state` out of a third, and adds one
-- that is written once per instance:
--
--   idx_instance_due (state, due_at)             dropped. Its scans (RETRY_WAIT due,
--                                                 WAITING past its dependency timeout) use
--                                                 idx_instance_claim (state, priority DESC,
--                                                 due_at): equality on `state`, `due_at`
--                                                 checked inside the index; the RETRY_WAIT and
--                                                 WAITING rows are few.
--   idx_instance_rerun_batch (rerun_batch_id, state)
--                                                 -> (rerun_batch_id): the R20 count reads one
--                                                 batch's rows; a NULL batch id no longer
--                                                 carries `state` for every other instance.
--   idx_instance_state_updated (state, updated_at)
--                                                 -> idx_instance_ended (ended_at): the
--                                                 retention purge walks final instances by
--                                                 `ended_at`, which every move to SUCCESS,
--                                                 FAILED or CANCELED sets once (a rerun clears
--                                                 it). Builds that still purge by `updated_at`
--                                                 (schema 1 code) stay correct, only slower.
--
-- event_log's idx_event_at (at) goes too: no query reads events by time (they are read and
-- purged by instance), and every event — two or more per instance — paid for it.
--
-- Kept, each needed: idx_instance_claim (claim order, and the scans above),
-- idx_instance_ack_deadline and idx_instance_lease (the R7/R14 expiry scans read their
-- deadline from the index instead of from every DISPATCHED/RUNNING row), idx_instance_task_state
-- (the R4 block check reads a task's active runs, not its whole history).
--
-- One ALTER TABLE per table (ALGORITHM=INPLACE, LOCK=NONE: writes go on while the indexes
-- are built, and it fails instead of copying the table); each is applied as a whole or not at
-- all. MySQL 8 has no DROP INDEX IF EXISTS: if the process dies between the statements, or
-- after them but before the runner records the file, re-running it fails on the first DROP;
-- apply what is missing and record the file by hand then.

ALTER TABLE task_instance
  DROP INDEX idx_instance_due,
  DROP INDEX idx_instance_state_updated,
  DROP INDEX idx_instance_rerun_batch,
  ADD INDEX idx_instance_rerun_batch (rerun_batch_id) COMMENT 'rerun concurrency at claim (R20)',
  ADD INDEX idx_instance_ended (ended_at) COMMENT 'retention purge of final instances, oldest end first',
  ALGORITHM=INPLACE, LOCK=NONE;

ALTER TABLE event_log
  DROP INDEX idx_event_at,
  ALGORITHM=INPLACE, LOCK=NONE;

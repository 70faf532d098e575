-- 0007_task_sla_index: the broker's SLA scan reads only the tasks with an sla (#23, #24: the
-- history benchmark's 100,000 tasks were every one read by every broker on every timer tick).
--
--   idx_task_sla_start   (sla_start_s) and
--   idx_task_sla_finish  (sla_finish_s): the first statement of scanSlaMissed (timers.ts),
--                        `SELECT name FROM task WHERE sla_start_s IS NOT NULL OR sla_finish_s IS
--                        NOT NULL`, as MariaDB's index_merge sort_union of one range of each
--                        (the non-NULL entries: only the tasks with an sla) where it read the
--                        whole table. Rewritten only when a task's sla changes (a definition
--                        write), not on the watermark moves the scheduler makes every fire.
--
-- Two plain indexes, not a generated column: the statement and every write of the task table
-- stay as they were, so this build also runs on schema 6 (its scan reads the whole table there,
-- as before) and the previous build's scan reads these indexes too (R22). The ALTER builds both
-- indexes in place, writes going on; the task table holds one row per definition. As 0006,
-- MySQL 8 has no ADD INDEX IF NOT EXISTS: if the process dies after the ALTER but before the
-- runner records the file, record the file by hand.

ALTER TABLE task
  ADD INDEX idx_task_sla_start (sla_start_s) COMMENT 'SLA scan: the tasks with an sla (start limit)',
  ADD INDEX idx_task_sla_finish (sla_finish_s) COMMENT 'SLA scan: the tasks with an sla (finish limit)';

-- 0006_history_indexes: the reads of months of history served by an index each (#24, "History
-- at scale": 5,000,000 instances over 90 days made the dashboard's stats scan every row, and
-- an old day's or hour's instance list walk the primary key backwards row by row).
--
--   promoted_at            when the instance last went WAITING -> PENDING (its DEPS_MET event;
--                          the scheduler's DAG promotion sets both in one transaction, from the
--                          database's clock, R6). NULL for instances never promoted. Filled
--                          below from the events of instances promoted before this migration.
--   due_time               VIRTUAL: when the instance became due, as the dashboard counts it
--                          (stats.ts): the latest of its `due_at`, its `created_at` if a
--                          dependency instance, and `promoted_at`. Computed, never written.
--   idx_instance_due_time  (due_time): `GET /stats/today` and `/stats/hourly` (dayStats,
--                          hourlyStats) read the day's instances as one range. Rewritten only
--                          when due_at or promoted_at changes (a retry, a rerun, a promotion),
--                          not on the state changes migration 0002 keeps cheap.
--   idx_instance_biz_day   (biz_date): `GET /instances?bizDate=` (listInstances, ORDER BY id
--                          DESC LIMIT n). InnoDB appends the primary key, so the newest n of a
--                          day are the index's last n entries of that date; the older
--                          (biz_date, task_name) index orders a day by task name and stays for
--                          the DAG's per-task reads. Written once per instance.
--   idx_instance_expected  (expected_time): `GET /instances?from=&to=` (listInstances) over a
--                          slot window, and the same for any read bounded by slot time. Written
--                          once per instance (a slot never moves, R1).
--   idx_instance_task      (task_name): `GET /instances?task=` newest first (listInstances)
--                          without reading and sorting all of the task's history (an every-minute
--                          task has 43,200 instances a month), and the task list's last run
--                          (lastRunsOf: the greatest id per task). idx_instance_task_created
--                          (task_name, created_at) served the latter; schema 5 builds still use
--                          it, so a later migration drops it (expand, then contract: R22).
--
-- Older builds (schema 5) keep working on this schema: they never name the new columns. An
-- instance they promote has no promoted_at, and the dashboard counts it at its due_at instead
-- of its promotion time until it is promoted again.
--
-- The ALTER adds the columns without copying the table (an instant add, a virtual column) and
-- builds the indexes in place, writes going on; the UPDATE reads each DEPS_MET event once.
-- MySQL 8 has no ADD COLUMN IF NOT EXISTS: if the process dies after the ALTER but before the
-- runner records the file, run the UPDATE by hand and record the file then (as 0002).

ALTER TABLE task_instance
  ADD COLUMN promoted_at DATETIME(3) NULL COMMENT 'last WAITING -> PENDING (DEPS_MET), database clock' AFTER due_at,
  ADD COLUMN due_time DATETIME(3) AS (GREATEST(due_at, IF(`trigger` = 'dependency', created_at, due_at), COALESCE(promoted_at, due_at))) VIRTUAL
    COMMENT 'when it became due, as the dashboard counts it' AFTER promoted_at,
  ADD INDEX idx_instance_due_time (due_time) COMMENT 'stats today and hourly: the day''s instances',
  ADD INDEX idx_instance_biz_day (biz_date) COMMENT 'instance list by bizDate, newest first',
  ADD INDEX idx_instance_expected (expected_time) COMMENT 'instance list by a from/to slot window',
  ADD INDEX idx_instance_task (task_name) COMMENT 'instance list by task, newest first; a task''s last run';

UPDATE task_instance i
  JOIN (SELECT instance_id, MAX(at) AS at FROM event_log WHERE type = 'DEPS_MET' GROUP BY instance_id) e ON e.instance_id = i.id
   SET i.promoted_at = e.at, i.updated_at = i.updated_at;

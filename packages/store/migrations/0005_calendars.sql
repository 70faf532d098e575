-- 0005_calendars: scheduling semantics of issue #22 (ADMIN-API.md "Calendars"; task fields
-- `calendar`, `jitterSeconds`, `pauseAfterFailures`, `sla`, `block: {"queue":N}`; the alert kinds
-- SLA_MISSED and TASK_PAUSED).
--
--   calendar                   one row per calendar: name (unique over all teams, as task names
--                              are; ^[a-z0-9][a-z0-9_.-]{0,63}$), its team (foreign key: the team
--                              must exist and keeps its calendars), timezone, the excluded dates
--                              as a JSON array of "YYYY-MM-DD" (at most 10,000), a version.
--   task.calendar              `calendar`: the name of a calendar of the task's own team, or NULL.
--   task.calendar_skipped_count fires not created because the calendar listed their date.
--   task_calendar_skip         one row per skipped slot (task_id, expected_time): INSERT IGNORE
--                              against its primary key counts each skip exactly once whichever
--                              scheduler (or re-scan) meets it; purged with old history.
--   task.jitter_s              `jitterSeconds`: each scheduled slot's due_at = expected_time + a
--                              stable offset in [0, jitter_s] s (computed by @ax/core from the
--                              task name and the slot, so every scheduler writes the same).
--   task.pause_after_failures  `pauseAfterFailures` (NULL = never pause).
--   task.paused_reason         `FAILURES` while the task is disabled by pauseAfterFailures; NULL
--                              otherwise (cleared by every enable).
--   task.failures_reset_at     consecutive failures are counted from finished instances whose
--                              ended_at is at or after this (set by every enable: "enabling it
--                              clears the count"); NULL = from the beginning.
--   task.sla_start_s           `sla.startWithinSeconds` (NULL = none).
--   task.sla_finish_s          `sla.finishWithinSeconds` (NULL = none). Two integer columns rather
--                              than JSON: the SLA scan compares them in SQL on both engines.
--   task.block_queue           N of `block: {"queue": N}` (then block_strategy = 'queue'); NULL otherwise.
--   alert_log.reason           the alert's `reason` (SLA_MISSED: START or FINISH; TASK_PAUSED:
--                              FAILURES); NULL for the kinds that carry none.
--   idx_instance_task_ended    (task_id, ended_at): the last N finished instances of a task, read
--                              backwards at each final failure (pauseAfterFailures), without a sort.
--
-- MySQL 8 has no ADD COLUMN IF NOT EXISTS: if the process dies between the ALTERs, re-running
-- the file fails on the first ALTER already applied; apply what is missing and record the file
-- by hand then (as 0002).

CREATE TABLE IF NOT EXISTS calendar (
  name       VARCHAR(64)  NOT NULL COMMENT '^[a-z0-9][a-z0-9_.-]{0,63}$',
  team       VARCHAR(64)  NOT NULL COMMENT 'owning team',
  timezone   VARCHAR(64)  NOT NULL DEFAULT 'UTC' COMMENT 'IANA zone in which slot dates are read',
  dates      JSON         NOT NULL COMMENT 'excluded dates, ["YYYY-MM-DD", ...], sorted',
  version    INT UNSIGNED NOT NULL DEFAULT 1,
  created_at DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  updated_at DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (name),
  KEY idx_calendar_team (team, name),
  CONSTRAINT fk_calendar_team FOREIGN KEY (team) REFERENCES team (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS task_calendar_skip (
  task_id       BIGINT UNSIGNED NOT NULL,
  expected_time DATETIME(3)     NOT NULL COMMENT 'the slot not fired',
  calendar      VARCHAR(64)     NOT NULL,
  at            DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (task_id, expected_time),
  KEY idx_calendar_skip_at (at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

ALTER TABLE task
  ADD COLUMN calendar               VARCHAR(64)     NULL COMMENT 'calendar name (same team)' AFTER dependency_timeout_s,
  ADD COLUMN calendar_skipped_count BIGINT UNSIGNED NOT NULL DEFAULT 0 COMMENT 'fires skipped by the calendar' AFTER coalesced_count,
  ADD INDEX idx_task_calendar (calendar),
  ADD COLUMN jitter_s             INT UNSIGNED NOT NULL DEFAULT 0 COMMENT 'jitterSeconds' AFTER calendar,
  ADD COLUMN pause_after_failures INT UNSIGNED NULL COMMENT 'pauseAfterFailures; NULL = never' AFTER jitter_s,
  ADD COLUMN paused_reason        VARCHAR(32)  NULL COMMENT 'FAILURES while disabled by pauseAfterFailures' AFTER pause_after_failures,
  ADD COLUMN failures_reset_at    DATETIME(3)  NULL COMMENT 'consecutive failures count from here (set by enable)' AFTER paused_reason,
  ADD COLUMN sla_start_s          INT UNSIGNED NULL COMMENT 'sla.startWithinSeconds' AFTER failures_reset_at,
  ADD COLUMN sla_finish_s         INT UNSIGNED NULL COMMENT 'sla.finishWithinSeconds' AFTER sla_start_s,
  ADD COLUMN block_queue          INT UNSIGNED NULL COMMENT 'N of block {"queue":N} (block_strategy = queue)' AFTER block_strategy;

ALTER TABLE alert_log
  ADD COLUMN reason VARCHAR(64) NULL COMMENT 'SLA_MISSED: START|FINISH; TASK_PAUSED: FAILURES' AFTER worker_id;

ALTER TABLE task_instance
  ADD INDEX idx_instance_task_ended (task_id, ended_at);

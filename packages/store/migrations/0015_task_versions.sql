-- 0015_task_versions: every saved task definition, and the version an instance was created from
-- (#47 "Task versions"; ADMIN-API.md GET /tasks/{name}/versions, POST /tasks/{name}/rollback).
--
--   task_version            one row per saved version of a task: the whole definition as it was
--                           saved (JSON of the parsed TaskDefinition, secrets as stored: the API
--                           redacts them for viewers), who saved it (token name; NULL = the
--                           system: a pause by pauseAfterFailures, a calendar change, or a
--                           definition saved before this migration) and when. Written in the
--                           transaction of every save (queries/task-versions.ts); the last
--                           TASK_VERSIONS_KEPT rows of a task are kept, older ones are pruned in
--                           the same transaction. Keyed by the task's immutable id, so a task
--                           deleted and created again under its name starts a new history; the
--                           rows go with their task (foreign key, ON DELETE CASCADE).
--   task_instance.task_version
--                           the task version of the definition the instance's latest dispatch
--                           sent (its worker ran that one); before its first dispatch, the one
--                           it was created (or re-run) from. NULL for rows written before this
--                           migration.
--
-- No backfill: a definition is parsed from the task row by the application (core's schema),
-- which SQL cannot do. A task saved before this migration gets its row lazily: the next save
-- records the definition it replaces first (with its updated_at and no actor), and until then
-- the versions list shows the current definition read from the task row.
--
-- Expand only (R22): builds before this one never name the table or the column.

CREATE TABLE IF NOT EXISTS task_version (
  task_id     BIGINT UNSIGNED NOT NULL,
  version     INT UNSIGNED    NOT NULL,
  definition  JSON            NOT NULL COMMENT 'the TaskDefinition as saved',
  actor       VARCHAR(128)    NULL COMMENT 'token name of the saver; NULL = the system',
  at          DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (task_id, version),
  CONSTRAINT fk_task_version_task FOREIGN KEY (task_id) REFERENCES task (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Added at the end of the table: MariaDB 10.3+ and MySQL 8.0 add it in place (instant).
ALTER TABLE task_instance
  ADD COLUMN task_version INT UNSIGNED NULL COMMENT 'the task version the instance was created from (#47); NULL before 0015';

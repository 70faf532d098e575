-- 0016_task_managed_by_and_own_timeout: which import manages a task, and whether a task sets its
-- own dependency timeout (#47).
--
--   task.managed_by         the marker of the import that last wrote the task (`axctl apply`
--                           sends `--source`, default `axctl`); NULL for a task made or last
--                           imported without one (the console, POST /tasks). `apply --prune`
--                           deletes only tasks carrying its own marker, so a console-made task
--                           is never pruned. Edits through PUT keep the marker.
--   task.dependency_timeout_default
--                           1 when the definition sets no `dependencyTimeoutSeconds`: the
--                           scheduler's AX_DEPENDENCY_TIMEOUT_S applies (it used to be the
--                           schema's 86400, stored in every row, so the setting changed nothing).
--                           `dependency_timeout_s` still holds 86400 then, for builds before 16.
--
-- Expand only (R22): builds before this one never name the columns; they read
-- dependency_timeout_s as before. Existing rows holding 86400 (the old schema default, which
-- a definition could not tell from a value set on purpose) become "not set": with
-- AX_DEPENDENCY_TIMEOUT_S unset they wait the same 86400 s.

ALTER TABLE task
  ADD COLUMN managed_by VARCHAR(128) NULL COMMENT 'marker of the import that manages the task (#47); NULL = none',
  ADD COLUMN dependency_timeout_default TINYINT(1) NOT NULL DEFAULT 0 COMMENT '1 = no own dependencyTimeoutSeconds: AX_DEPENDENCY_TIMEOUT_S applies';

UPDATE task SET dependency_timeout_default = 1 WHERE dependency_timeout_s = 86400;

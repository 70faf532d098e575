-- 0009_task_text_search: a substring index for task search (#24). `GET /tasks?q=` finds the
-- tasks whose name or description contains q (`LIKE '%q%'`, case-insensitive); with no index
-- for that, it read the task table in name order until a page matched: 90,000 rows for a
-- name near the end of 100,000 tasks (p99 1.9 s with 20 clients).
--
--   task_text_trigram   every distinct 3-character substring (trigram) of each task's name and
--                       of its description, as written (the collation makes it
--                       case-insensitive). Serves listTasks with q of 3 characters or more
--                       (store/src/queries/task-text.ts): the rarest of q's trigrams is read
--                       in name order (PRIMARY KEY (trigram, task_name)), two others are
--                       checked by the same key, and LIKE confirms each row, until a page is
--                       full. idx_task_text_trigram_task serves the rewrite of one task's
--                       rows and the foreign key (a deleted task takes its rows along).
--   task_text_indexed   the task's updated_at when its rows were written. Every definition
--                       write of this build rewrites both in its transaction; admin-api's
--                       sweep (task-text-sweep.ts) re-indexes a task whose updated_at moved
--                       without it: a task written by the previous build during a rolling
--                       upgrade (R22: that build knows nothing of these tables), or by hand.
--
-- The rows are filled here, in SQL, by the rule of task-text.ts (`textTrigrams`): positions
-- 1..len-2 of the name and of the description, from a numbers table this file fills and
-- drops. About 80 bytes per trigram; 100,000 tasks with 30 trigrams each take ~250 MB and
-- this file about a minute (docs/production.md, Upgrading). Re-running it is harmless.

CREATE TABLE IF NOT EXISTS task_text_trigram (
  trigram    VARCHAR(3)   NOT NULL COMMENT '3 characters of the name or the description, as written',
  task_name  VARCHAR(128) NOT NULL,
  PRIMARY KEY (trigram, task_name),
  KEY idx_task_text_trigram_task (task_name) COMMENT 'rewrite of one task; the foreign key',
  CONSTRAINT fk_task_text_trigram_task FOREIGN KEY (task_name) REFERENCES task (name) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS task_text_indexed (
  task_name   VARCHAR(128) NOT NULL,
  updated_at  DATETIME(3)  NOT NULL COMMENT 'task.updated_at when its trigrams were written',
  PRIMARY KEY (task_name),
  CONSTRAINT fk_task_text_indexed_task FOREIGN KEY (task_name) REFERENCES task (name) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS task_text_position (
  i SMALLINT UNSIGNED NOT NULL,
  PRIMARY KEY (i)
) ENGINE=InnoDB;

INSERT IGNORE INTO task_text_position (i)
SELECT 1 + d0.d + 10 * d1.d + 100 * d2.d + 1000 * d3.d
  FROM (SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4
        UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) d0
 CROSS JOIN (SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4
        UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) d1
 CROSS JOIN (SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4
        UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) d2
 CROSS JOIN (SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2) d3
 WHERE 1 + d0.d + 10 * d1.d + 100 * d2.d + 1000 * d3.d <= 2046;

-- The previous build keeps writing task rows while this runs (R22: the scheduler moves each
-- task's watermark on every fire). So the reads of task below lock nothing: READ COMMITTED
-- reads it without shared locks, and the foreign keys are not checked here (a check takes a
-- shared lock on the parent row until the statement ends, ~a minute for 100,000 tasks). A
-- task deleted meanwhile may leave rows behind: a search joins task, so they match nothing,
-- and a new task of that name rewrites its rows. The runner closes this connection when a
-- file fails, so the setting never outlives it.
SET SESSION foreign_key_checks = 0;

-- First what is indexed, then the rows: a task the previous build writes meanwhile has another
-- updated_at by then (or no row here), and the sweep re-indexes it.
SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
INSERT IGNORE INTO task_text_indexed (task_name, updated_at)
SELECT name, updated_at FROM task;

-- The name's trigrams, then the description's; each read of positions is a range of the
-- numbers table's key, so the work is the number of trigrams, not tasks × 2,046.
SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
INSERT IGNORE INTO task_text_trigram (trigram, task_name)
SELECT SUBSTRING(t.name, p.i, 3), t.name
  FROM task t JOIN task_text_position p ON p.i <= CHAR_LENGTH(t.name) - 2;

SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
INSERT IGNORE INTO task_text_trigram (trigram, task_name)
SELECT SUBSTRING(t.description, p.i, 3), t.name
  FROM task t JOIN task_text_position p ON p.i <= CHAR_LENGTH(t.description) - 2;

SET SESSION foreign_key_checks = 1;

DROP TABLE IF EXISTS task_text_position;

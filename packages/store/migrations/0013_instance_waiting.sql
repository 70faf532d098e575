-- 0013_instance_waiting: why a due instance that is not dispatched waits (#45, DESIGN R23,
-- ADMIN-API.md "Waiting instances"). Expand only (R22): nothing is dropped or made stricter.
--
--   task_instance.waiting_reason   SERIAL_BUSY | QUEUE_POSITION | BATCH_CONCURRENCY | TEAM_LIMIT |
--                                  NO_WORKER | BACKLOG_HOLD | RATE_LIMIT | DISPATCH_PAUSED |
--                                  UPSTREAM; NULL = not held (or not classified yet).
--   task_instance.waiting_since    when the instance started waiting for that reason (database clock).
--   task_instance.waiting_message  one human sentence naming the concrete cause.
--
-- Written only by the brokers' backlog scan (services/broker/src/backlog-scan.ts), never by the
-- claim or a state transition: the hot paths do not name these columns, so a build before this
-- one keeps working, and a dispatch does not rewrite them. A value left behind once the
-- instance was dispatched is ignored by readers (they show it only for WAITING and PENDING
-- rows) and cleared by the next scan through idx_instance_waiting, which holds an entry only
-- for the few rows that have a reason (the column is NULL for every other row).
--
-- Added at the end of the table, so MariaDB 10.3+ and MySQL 8.0 add them in place (instant).

ALTER TABLE task_instance
  ADD COLUMN waiting_reason  VARCHAR(24)  NULL COMMENT 'why a due instance waits (ADMIN-API "Waiting instances"); NULL = not held',
  ADD COLUMN waiting_since   DATETIME(3)  NULL COMMENT 'since when it waits for waiting_reason',
  ADD COLUMN waiting_message VARCHAR(512) NULL COMMENT 'the concrete cause, one sentence';

ALTER TABLE task_instance
  ADD INDEX idx_instance_waiting (waiting_reason) COMMENT 'backlog scan: clears reasons of rows no longer held',
  ALGORITHM=INPLACE, LOCK=NONE;

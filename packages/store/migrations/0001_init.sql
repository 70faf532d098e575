-- 0001_init: the ax schema (DESIGN §2 and §10).
--
-- Conventions of every migration in this folder
--   * forward-only, numbered NNNN_name.sql, applied in order by packages/store/src/migrate.ts and
--     recorded in schema_migrations with a checksum: never edit an applied file, add a new one;
--   * the common subset of MySQL 8 and MariaDB 10.11; expand-then-contract (R22): add columns and
--     tables first, drop them only in a later release once no supported build reads them;
--   * each statement re-runnable where cheap (IF NOT EXISTS, INSERT IGNORE): MySQL auto-commits DDL,
--     so a file that failed halfway is re-run from the top;
--   * InnoDB, utf8mb4 with utf8mb4_unicode_ci (MySQL's utf8mb4_0900_ai_ci does not exist on
--     MariaDB); execution ids are CHAR(36) ascii_bin everywhere so they join without conversion;
--   * every time is DATETIME(3) in UTC: the pool sets time_zone '+00:00' on every connection (R6),
--     so CURRENT_TIMESTAMP(3) defaults are UTC too;
--   * JSON columns are `JSON` (MariaDB: LONGTEXT with a JSON_VALID check); the application always
--     writes them (MySQL allows no literal default on JSON); decode with decodeJson();
--   * states, triggers, reasons, rules, roles are VARCHAR, not ENUM or CHECK: @ax/core owns the
--     vocabularies, and a new value must not need a table rebuild;
--   * no foreign keys on the history tables (instances outlive their task, purges run in
--     batches); task_edge references task so edges go with their task.
--
-- Tables
--   task                 one row per task definition; the scheduler's watermark
--                        (last_fire_time) and next_fire_time; misfire counters.
--   task_edge            DAG edges between task names with a trigger rule.
--   dag_lock             a single row locked FOR UPDATE by every edge write, so two concurrent
--                        writes cannot each pass the cycle check (R19); dag_version counts changes.
--   task_instance        one row per scheduled slot, UNIQUE (task_name, expected_time) is the
--                        guard against duplicate fires (R1, R2); state machine of DESIGN §2.
--   task_execution       one row per dispatch of an attempt (the run log), fenced by execution_id.
--   event_log            append-only lifecycle events of instances and executions.
--   audit_log            who did what through the admin API, with before/after.
--   api_token            hashed bearer tokens with a role.
--   rerun_batch          a rerun/backfill request: its concurrency limit is checked at claim (R20).
--   trigger_idempotency  Idempotency-Key of manual triggers -> the instance it created (24 h).
--   execution_claim      the business-side claim per (instance, run_no, shard) (R18, R21).
--   dead_letter          messages that failed validation, as consumed from the dead-letter queue.
--   alert_log            alerts sent, deduplicated per instance (or worker) and kind.
--   task_daily_stats     per-day, per-task aggregates kept by the retention purge.
--   system_flag          global switches (dispatch_paused) as JSON values.
--   schema_migrations    created by the runner itself (version, name, checksum, applied_at).

CREATE TABLE IF NOT EXISTS task (
  id                   BIGINT UNSIGNED  NOT NULL AUTO_INCREMENT,
  name                 VARCHAR(128)     NOT NULL,
  description          VARCHAR(2048)    NOT NULL DEFAULT '',
  owner                VARCHAR(128)     NOT NULL DEFAULT '',
  schedule             JSON             NOT NULL COMMENT '{"type":"cron"|"fixed_rate"|"once"|"none",...} as in the API',
  schedule_type        VARCHAR(16)      NOT NULL COMMENT 'copy of schedule.type for filtering',
  timezone             VARCHAR(64)      NOT NULL DEFAULT 'UTC' COMMENT 'IANA zone for cron and biz_date',
  exec                 JSON             NOT NULL COMMENT 'shell | http | plugin; secrets only as secretRef',
  params               JSON             NOT NULL,
  tags                 JSON             NOT NULL COMMENT 'array of strings a worker must all carry',
  priority             TINYINT UNSIGNED NOT NULL DEFAULT 5 COMMENT '0..9, higher first',
  timeout_s            INT UNSIGNED     NOT NULL DEFAULT 3600,
  retry                JSON             NOT NULL COMMENT '{max, backoffSeconds, factor, jitterSeconds}',
  misfire              JSON             NOT NULL COMMENT '{policy: skip|fire_once|catch_up, max?}',
  block_strategy       VARCHAR(16)      NOT NULL DEFAULT 'serial' COMMENT 'parallel|serial|discard|cover',
  max_lateness_s       INT UNSIGNED     NULL,
  route                VARCHAR(32)      NOT NULL DEFAULT 'load' COMMENT 'load|round_robin|consistent_hash|broadcast',
  biz_date_offset_days SMALLINT         NOT NULL DEFAULT 0,
  dependency_timeout_s INT UNSIGNED     NOT NULL DEFAULT 86400,
  enabled              TINYINT(1)       NOT NULL DEFAULT 1,
  version              INT UNSIGNED     NOT NULL DEFAULT 1 COMMENT 'optimistic concurrency of edits',
  last_fire_time       DATETIME(3)      NULL COMMENT 'watermark: every slot up to here has its row (R2)',
  next_fire_time       DATETIME(3)      NULL,
  skipped_count        BIGINT UNSIGNED  NOT NULL DEFAULT 0 COMMENT 'slots dropped by misfire skip/catch_up cap',
  coalesced_count      BIGINT UNSIGNED  NOT NULL DEFAULT 0 COMMENT 'slots folded into one (fire_once, serial)',
  created_at           DATETIME(3)      NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  updated_at           DATETIME(3)      NOT NULL DEFAULT CURRENT_TIMESTAMP(3) COMMENT 'set by definition writes only, not by watermark moves',
  PRIMARY KEY (id),
  UNIQUE KEY uk_task_name (name),
  KEY idx_task_enabled_next_fire (enabled, next_fire_time)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS task_edge (
  parent_task VARCHAR(128) NOT NULL,
  child_task  VARCHAR(128) NOT NULL,
  rule        VARCHAR(16)  NOT NULL DEFAULT 'ALL_SUCCESS' COMMENT 'ALL_SUCCESS|ALL_DONE',
  created_at  DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (parent_task, child_task),
  KEY idx_task_edge_child (child_task),
  CONSTRAINT fk_task_edge_parent FOREIGN KEY (parent_task) REFERENCES task (name) ON DELETE CASCADE,
  CONSTRAINT fk_task_edge_child FOREIGN KEY (child_task) REFERENCES task (name) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS dag_lock (
  id          TINYINT UNSIGNED NOT NULL COMMENT 'always 1',
  dag_version BIGINT UNSIGNED  NOT NULL DEFAULT 0 COMMENT 'incremented by every edge write',
  updated_at  DATETIME(3)      NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

INSERT IGNORE INTO dag_lock (id, dag_version) VALUES (1, 0);

CREATE TABLE IF NOT EXISTS task_instance (
  id                   BIGINT UNSIGNED  NOT NULL AUTO_INCREMENT,
  task_id              BIGINT UNSIGNED  NOT NULL COMMENT 'immutable; the task row may be gone (R3)',
  task_name            VARCHAR(128)     NOT NULL,
  expected_time        DATETIME(3)      NOT NULL COMMENT 'the slot (R1)',
  run_no               INT UNSIGNED     NOT NULL DEFAULT 1 COMMENT '1, +1 per rerun (R18)',
  biz_date             DATE             NOT NULL,
  `trigger`            VARCHAR(16)      NOT NULL COMMENT 'schedule|manual|dependency|rerun',
  state                VARCHAR(16)      NOT NULL COMMENT 'WAITING|PENDING|DISPATCHED|RUNNING|RETRY_WAIT|SUCCESS|FAILED|CANCELED',
  reason               VARCHAR(64)      NULL COMMENT 'TIMEOUT, LOST_WORKER, ACK_TIMEOUT, TOO_LATE, ...',
  attempt              INT UNSIGNED     NOT NULL DEFAULT 1 COMMENT 'current attempt, 1-based',
  max_attempts         INT UNSIGNED     NOT NULL DEFAULT 1,
  due_at               DATETIME(3)      NOT NULL COMMENT 'earliest dispatch (slot time, or retry time)',
  params               JSON             NOT NULL,
  priority             TINYINT UNSIGNED NOT NULL DEFAULT 5,
  worker_id            VARCHAR(255)     NULL,
  dispatch_count       INT UNSIGNED     NOT NULL DEFAULT 0,
  reroute_count        INT UNSIGNED     NOT NULL DEFAULT 0 COMMENT 'ACK-timeout re-routes of the current attempt',
  lost_count           INT UNSIGNED     NOT NULL DEFAULT 0 COMMENT 'automatic re-dispatches after LOST_WORKER',
  ack_deadline         DATETIME(3)      NULL,
  lease_until          DATETIME(3)      NULL,
  current_execution_id CHAR(36) CHARACTER SET ascii COLLATE ascii_bin NULL COMMENT 'the only execution allowed to change this row',
  rerun_batch_id       BIGINT UNSIGNED  NULL,
  shard_total          INT UNSIGNED     NULL COMMENT 'broadcast: number of shards of the current run (R21)',
  created_at           DATETIME(3)      NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  updated_at           DATETIME(3)      NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  started_at           DATETIME(3)      NULL,
  ended_at             DATETIME(3)      NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uk_instance_slot (task_name, expected_time),
  KEY idx_instance_claim (state, priority DESC, due_at) COMMENT 'claim: PENDING, priority DESC, due_at ASC',
  KEY idx_instance_ack_deadline (state, ack_deadline) COMMENT 'ACK expiry scan (R7)',
  KEY idx_instance_lease (state, lease_until) COMMENT 'lease expiry scan (R7, R14)',
  KEY idx_instance_due (state, due_at) COMMENT 'RETRY_WAIT -> PENDING, WAITING timeouts (R7, R19)',
  KEY idx_instance_task_state (task_name, state) COMMENT 'block strategy check at claim (R4)',
  KEY idx_instance_task_created (task_name, created_at) COMMENT 'per-task history',
  KEY idx_instance_biz_date (biz_date, task_name) COMMENT 'DAG readiness and reruns by biz_date',
  KEY idx_instance_state_updated (state, updated_at) COMMENT 'retention purge of final instances',
  KEY idx_instance_rerun_batch (rerun_batch_id, state) COMMENT 'rerun concurrency at claim (R20)'
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS task_execution (
  id               BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  execution_id     CHAR(36) CHARACTER SET ascii COLLATE ascii_bin NOT NULL COMMENT 'UUIDv7',
  instance_id      BIGINT UNSIGNED NOT NULL,
  attempt          INT UNSIGNED    NOT NULL,
  run_no           INT UNSIGNED    NOT NULL,
  shard_index      INT UNSIGNED    NULL,
  shard_total      INT UNSIGNED    NULL,
  worker_id        VARCHAR(255)    NOT NULL,
  state            VARCHAR(16)     NOT NULL COMMENT 'DISPATCHED|RUNNING|SUCCESS|FAILED|TIMED_OUT|CANCELED|SUPERSEDED|...',
  reason           VARCHAR(64)     NULL,
  dispatched_at    DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  acked_at         DATETIME(3)     NULL,
  started_at       DATETIME(3)     NULL,
  ended_at         DATETIME(3)     NULL,
  exit_code        INT             NULL,
  output_tail      MEDIUMTEXT      NULL COMMENT 'last <= 64 KiB of output',
  output_truncated TINYINT(1)      NOT NULL DEFAULT 0,
  error            TEXT            NULL,
  result           JSON            NULL COMMENT 'business result {success, message?, data?} of http executors',
  created_at       DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  UNIQUE KEY uk_execution_id (execution_id),
  KEY idx_execution_instance (instance_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS event_log (
  id           BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  instance_id  BIGINT UNSIGNED NOT NULL,
  execution_id CHAR(36) CHARACTER SET ascii COLLATE ascii_bin NULL,
  type         VARCHAR(32)     NOT NULL COMMENT 'CREATED, DISPATCHED, ACKED, ... (DESIGN §2)',
  at           DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  worker_id    VARCHAR(255)    NULL,
  message      VARCHAR(2048)   NULL,
  data         JSON            NULL,
  PRIMARY KEY (id),
  KEY idx_event_instance (instance_id, id),
  KEY idx_event_at (at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS audit_log (
  id          BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  at          DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  actor       VARCHAR(128)    NOT NULL COMMENT 'token name',
  action      VARCHAR(64)     NOT NULL COMMENT 'task.create, edge.delete, rerun.create, ...',
  target      VARCHAR(255)    NOT NULL,
  reason      VARCHAR(2048)   NULL,
  before_json JSON            NULL COMMENT 'secrets redacted',
  after_json  JSON            NULL COMMENT 'secrets redacted',
  PRIMARY KEY (id),
  KEY idx_audit_at (at),
  KEY idx_audit_actor_at (actor, at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS api_token (
  id           BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  name         VARCHAR(128)    NOT NULL,
  role         VARCHAR(16)     NOT NULL COMMENT 'viewer|operator|admin',
  token_hash   CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL COMMENT 'hex SHA-256 of the token',
  created_at   DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  revoked_at   DATETIME(3)     NULL,
  last_used_at DATETIME(3)     NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uk_api_token_hash (token_hash)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS rerun_batch (
  id               BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  mode             VARCHAR(16)     NOT NULL COMMENT 'instance|dag|failed|backfill',
  reason           VARCHAR(2048)   NOT NULL,
  actor            VARCHAR(128)    NOT NULL,
  concurrency      INT UNSIGNED    NULL COMMENT 'most instances of the batch running at once; NULL = no limit',
  force_downstream TINYINT(1)      NOT NULL DEFAULT 0,
  request          JSON            NOT NULL COMMENT 'the request body as accepted (dry runs write no row)',
  created_at       DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  KEY idx_rerun_batch_created (created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS trigger_idempotency (
  task_name       VARCHAR(128)    NOT NULL,
  idempotency_key VARCHAR(255)    NOT NULL,
  instance_id     BIGINT UNSIGNED NOT NULL,
  created_at      DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (task_name, idempotency_key) COMMENT 'a key is scoped to the task it triggers',
  KEY idx_trigger_idempotency_created (created_at) COMMENT 'purge after 24 h'
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS execution_claim (
  instance_id  BIGINT UNSIGNED NOT NULL,
  run_no       INT UNSIGNED    NOT NULL,
  shard_index  INT             NOT NULL DEFAULT -1 COMMENT '-1 for a non-broadcast run',
  execution_id CHAR(36) CHARACTER SET ascii COLLATE ascii_bin NOT NULL COMMENT 'the holder',
  claimed_at   DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (instance_id, run_no, shard_index),
  KEY idx_execution_claim_execution (execution_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS dead_letter (
  id           BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  at           DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  source_queue VARCHAR(255)    NOT NULL,
  reason       VARCHAR(2048)   NOT NULL,
  payload      MEDIUMTEXT      NULL COMMENT 'message body as text, bounded by the consumer',
  headers      JSON            NULL,
  PRIMARY KEY (id),
  KEY idx_dead_letter_at (at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS alert_log (
  id           BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  dedup_key    VARCHAR(255)    NOT NULL COMMENT '<kind>:<instance id> (or :<worker>/<task> for alerts without an instance)',
  kind         VARCHAR(32)     NOT NULL COMMENT 'FINAL_FAILURE, LOST_WORKER, NO_WORKER, ...',
  severity     VARCHAR(16)     NOT NULL DEFAULT 'warning' COMMENT 'critical|warning',
  instance_id  BIGINT UNSIGNED NULL,
  task_name    VARCHAR(128)    NULL,
  worker_id    VARCHAR(255)    NULL,
  message      VARCHAR(2048)   NULL,
  at           DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  delivered_at DATETIME(3)     NULL COMMENT 'NULL until the webhook accepted it',
  PRIMARY KEY (id),
  UNIQUE KEY uk_alert_dedup (dedup_key),
  KEY idx_alert_at (at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS task_daily_stats (
  day                  DATE            NOT NULL COMMENT 'UTC day',
  task_name            VARCHAR(128)    NOT NULL,
  total                INT UNSIGNED    NOT NULL DEFAULT 0,
  succeeded            INT UNSIGNED    NOT NULL DEFAULT 0,
  failed               INT UNSIGNED    NOT NULL DEFAULT 0,
  canceled             INT UNSIGNED    NOT NULL DEFAULT 0,
  avg_trigger_delay_ms BIGINT UNSIGNED NULL,
  max_duration_ms      BIGINT UNSIGNED NULL,
  updated_at           DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  PRIMARY KEY (day, task_name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS system_flag (
  name       VARCHAR(64)  NOT NULL,
  value      JSON         NOT NULL,
  updated_at DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  updated_by VARCHAR(128) NULL,
  PRIMARY KEY (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

INSERT IGNORE INTO system_flag (name, value) VALUES ('dispatch_paused', 'false');

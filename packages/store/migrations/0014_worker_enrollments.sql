-- 0014_worker_enrollments: worker enrollments (#44; ADMIN-API.md "Workers", DESIGN R24/R25).
--
--   worker_enrollment   one row per enrollment: its id (`enr-` + 12, never reused), the name an
--                       operator gave it, the teams its workers serve (`["*"]` = every team)
--                       and the tags they may offer, the SHA-256 of its credential (the
--                       credential itself is shown once and never stored), who created it, and
--                       when it was revoked (NULL while live). Its RabbitMQ and Redis users are
--                       named after the id and their passwords derived from the master secret
--                       (@ax/core identity/enrollment.ts), so no login is stored here.
--                       `live_name` makes names unique among live enrollments only: a revoked
--                       enrollment's name may be used again (its id never is).
--
-- Expand only (R22): a build before this one has no enrollments and its workers run unenrolled.

CREATE TABLE IF NOT EXISTS worker_enrollment (
  id               VARCHAR(16)  NOT NULL COMMENT 'enr-<12 of [a-z0-9]>',
  name             VARCHAR(64)  NOT NULL,
  teams            JSON         NOT NULL COMMENT '["alpha",…] or ["*"]',
  tags             JSON         NOT NULL COMMENT '["gpu",…]: tags its workers may offer; [] = any',
  credential_hash  CHAR(64)     NOT NULL COMMENT 'sha256 hex of the credential',
  created_by       VARCHAR(128) NULL COMMENT 'token name of the creator',
  created_at       DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  revoked_at       DATETIME(3)  NULL,
  live_name        VARCHAR(64)  AS (IF(revoked_at IS NULL, name, NULL)) STORED,
  PRIMARY KEY (id),
  UNIQUE KEY uq_enrollment_credential (credential_hash),
  UNIQUE KEY uq_enrollment_live_name (live_name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

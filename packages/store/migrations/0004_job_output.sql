-- 0004_job_output: every attempt's stdout and stderr (issue #19, DESIGN §11, ADMIN-API.md
-- "Job output (logs)"), written by the brokers from the workers' `log` messages.
--
--   job_log_chunk  one row per chunk a worker shipped (up to 256 KiB of one stream, usually one
--                  batch of a few hundred ms of output). The key (execution_id, stream,
--                  byte_offset) makes an append idempotent: a redelivered chunk hits the key and
--                  changes nothing (the write keeps the longer of two chunks at the same offset,
--                  so a chunk cut differently after a worker restart fills in, never shrinks).
--                  byte_offset counts bytes of that stream before the chunk, all_offset bytes of
--                  both streams in capture order (the `all` view), byte_len the chunk's decoded
--                  length. `data` is the bytes as written by the job (codec 'raw') or
--                  raw-deflated by the broker (codec 'deflate', kept only when it saves space).
--                  idx_log_chunk_all reads `all` in order and, holding byte_len and (through the
--                  primary key) stream and byte_offset, answers size and completeness from the
--                  index alone, without reading the data pages.
--   job_log_end    one row per execution whose output was all sent: the sizes the job wrote to
--                  each stream (kept or not) and whether bytes past AX_LOG_MAX_BYTES were dropped.
--
-- No instance id and no foreign key (like the other history tables): rows are found through
-- task_execution, and the retention purge deletes them by execution id in small batches before
-- it deletes the executions (queries/retention.ts).

CREATE TABLE IF NOT EXISTS job_log_chunk (
  execution_id CHAR(36) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  stream       VARCHAR(6) CHARACTER SET ascii COLLATE ascii_bin NOT NULL COMMENT 'stdout|stderr',
  byte_offset  BIGINT UNSIGNED NOT NULL COMMENT 'bytes of this stream before the chunk',
  all_offset   BIGINT UNSIGNED NOT NULL COMMENT 'bytes of both streams before the chunk, in capture order',
  byte_len     INT UNSIGNED    NOT NULL COMMENT 'decoded length of the chunk, bytes',
  codec        VARCHAR(8) CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT 'raw' COMMENT 'raw|deflate',
  data         MEDIUMBLOB      NOT NULL,
  created_at   DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (execution_id, stream, byte_offset),
  KEY idx_log_chunk_all (execution_id, all_offset, byte_len)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS job_log_end (
  execution_id CHAR(36) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  stdout_bytes BIGINT UNSIGNED NOT NULL COMMENT 'bytes the job wrote to stdout, kept or not',
  stderr_bytes BIGINT UNSIGNED NOT NULL COMMENT 'bytes the job wrote to stderr, kept or not',
  truncated    TINYINT(1)      NOT NULL COMMENT 'bytes past AX_LOG_MAX_BYTES were dropped',
  created_at   DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (execution_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

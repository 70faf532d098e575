-- 0017_instance_trace: the trace context of each run (#48 "OpenTelemetry across the services").
--
--   task_instance.trace_parent
--                           the W3C `traceparent` (00-<trace id>-<span id>-<flags>) of the run:
--                           written by the scheduler at the fire (its fire span), or by the
--                           broker at the first dispatch of an instance created without one (a
--                           manual run, a rerun, a row from before this migration). The broker's
--                           claim and dispatch spans are its children, so every attempt of a run
--                           lands in one trace; its trace id is the `traceId` of every log line
--                           of the run. A rerun clears it: the new run starts a new trace.
--                           NULL for rows written before this migration and not dispatched since.
--
-- Expand only (R22): builds before this one never name the column.

-- Added at the end of the table: MariaDB 10.3+ and MySQL 8.0 add it in place (instant).
ALTER TABLE task_instance
  ADD COLUMN trace_parent VARCHAR(55) CHARACTER SET ascii COLLATE ascii_bin NULL COMMENT 'W3C traceparent of the run (#48); NULL before 0017';

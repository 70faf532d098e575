-- 0008_stats_rollup: the hourly figures of past days, kept once computed (#24: on the bench's
-- history `GET /stats/hourly?day=<a past day>` read the day's 55,000 instances and their
-- executions on every request, 13 s at p99 with 20 clients).
--
--   instance_stats_day   one row per rolled-up UTC day: its figures are in instance_stats_hour,
--                        and they equal what the live query of hourlyStats (stats.ts) gives
--                        for it. A day is rolled up only once it ended at least a day ago and
--                        every instance due in it is final (stats-rollup.ts), so nothing but a
--                        rerun, a retention purge or a task's deletion or move to another team
--                        changes its figures; each of those deletes the day's row (a task's
--                        change: every day from its first run) and the admin API answers the
--                        day live until it is rolled up again.
--   instance_stats_hour  per day, hour (0-23, UTC) and team of the instance's task ('' for a
--                        deleted task): the counts and the sums and counts behind the two means,
--                        so a token's teams add up their rows to the figures of the live query.
--                        Hours without instances have no row.
--
-- Both tables are new: nothing an older build runs reads or writes them, and this build answers
-- live on schema 6 and 7 (R22). An older build's rerun does not delete the day's row: while
-- both builds run, a past day a rerun left may still count that instance.

CREATE TABLE IF NOT EXISTS instance_stats_day (
  day           DATE NOT NULL,
  instances     INT UNSIGNED NOT NULL COMMENT 'instances due that day when it was rolled up',
  rolled_up_at  DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (day)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS instance_stats_hour (
  day           DATE NOT NULL,
  hour          TINYINT UNSIGNED NOT NULL COMMENT '0-23: the UTC hour the instances became due',
  team          VARCHAR(64) NOT NULL COMMENT 'the team of their task; empty for a deleted task',
  runs          INT UNSIGNED NOT NULL,
  succeeded     INT UNSIGNED NOT NULL,
  failed        INT UNSIGNED NOT NULL,
  fire_lag_us   BIGINT NOT NULL COMMENT 'sum of commit - expected time over schedule instances, us',
  fire_lag_n    INT UNSIGNED NOT NULL,
  delay_us      BIGINT NOT NULL COMMENT 'sum of start - due time over started instances, us',
  delay_n       INT UNSIGNED NOT NULL,
  PRIMARY KEY (day, hour, team)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

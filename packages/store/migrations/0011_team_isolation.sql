-- 0011_team_isolation: what keeps one team from reaching another (#44, docs/teams.md).
--
--   team.http_allow      JSON array of AX_HTTP_EXECUTOR_ALLOW entries the team's `http` tasks
--                        may call, within the global list; NULL = the global list as it is.
--   team_key_floor       per deleted team name, the last executor key version it had: a team
--                        created again under that name starts above it, so it never gets a key
--                        (and so a signature) the deleted team had. Rows are never removed.
--   task_edge.parent_team, task_edge.child_team
--                        the teams of the edge's two tasks when a token covering the child's
--                        team wrote the edge. An edge between tasks of two teams creates
--                        instances of a dependency-only child only while both tasks are still
--                        of these teams (a task moved to another team needs the edge written
--                        again). Existing edges take their tasks' teams now: every edge was
--                        written by a token covering its child's team (ADMIN-API.md "Teams").
--
-- MySQL 8 has no ADD COLUMN IF NOT EXISTS: if the process dies between the ALTERs, re-running
-- the file fails on the first ALTER already applied; apply what is missing and record the file
-- by hand then (as 0002).

ALTER TABLE team
  ADD COLUMN http_allow JSON NULL COMMENT 'AX_HTTP_EXECUTOR_ALLOW entries narrowing the global list for this team; NULL = no narrowing' AFTER max_running;

CREATE TABLE IF NOT EXISTS team_key_floor (
  name             VARCHAR(64)  NOT NULL COMMENT 'a deleted team',
  last_key_version INT UNSIGNED NOT NULL COMMENT 'its highest executor key version; a new team of that name starts above it',
  deleted_at       DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

ALTER TABLE task_edge
  ADD COLUMN parent_team VARCHAR(64) NULL COMMENT 'team of the parent task when the edge was written' AFTER rule,
  ADD COLUMN child_team  VARCHAR(64) NULL COMMENT 'team of the child task when the edge was written (by a token covering it)' AFTER parent_team;

UPDATE task_edge e
  JOIN task p ON p.name = e.parent_task
  JOIN task c ON c.name = e.child_task
   SET e.parent_team = p.team, e.child_team = c.team;

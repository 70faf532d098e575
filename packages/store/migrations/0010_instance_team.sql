-- 0010_instance_team: the team on the instance row, and team weights (#45 "Noisy neighbours",
-- DESIGN R23, §11). Expand step of R22: nothing is dropped or made stricter.
--
--   task_instance.team   the owning team, copied from the task when the row is inserted (every
--                        insert path of this build writes it: scheduler slots, DAG children,
--                        manual triggers, reruns, backfills). NULL = a row written by a build
--                        before 0010 during a rolling upgrade, or whose task was deleted before
--                        this file ran: readers fall back to the task's team (the claim does,
--                        in SQL). A later contract migration may make it NOT NULL once no build
--                        older than 0010 runs.
--                        Backfilled here from the task row (one UPDATE; on a table of millions
--                        of rows plan for it like 0006's backfill, docs/production.md).
--   idx_instance_team_claim (state, team, priority DESC, due_at)
--                        the claim by team (R23 fair share): one range per team of the due
--                        PENDING rows in the claim's order, so a team's flood is never read to
--                        reach another team's instance; and the teams with PENDING rows are a
--                        loose scan of its prefix.
--   idx_instance_team (team)
--                        "instances by team", newest first (the primary key follows team in
--                        the entry), for the history reads.
--   team.weight          share of contended slots (ADMIN-API.md "Teams", R23), default 1.

ALTER TABLE task_instance
  ADD COLUMN team VARCHAR(64) NULL COMMENT 'owning team (the task''s at insert); NULL = written before 0010' AFTER task_name;

UPDATE task_instance i JOIN task t ON t.id = i.task_id
   SET i.team = t.team, i.updated_at = i.updated_at
 WHERE i.team IS NULL;

ALTER TABLE task_instance
  ADD INDEX idx_instance_team_claim (state, team, priority DESC, due_at) COMMENT 'claim by team (R23)',
  ADD INDEX idx_instance_team (team) COMMENT 'instances by team, newest first',
  ALGORITHM=INPLACE, LOCK=NONE;

ALTER TABLE team
  ADD COLUMN weight INT UNSIGNED NOT NULL DEFAULT 1 COMMENT 'share of contended slots (R23)' AFTER max_running;

-- 0003_teams: teams as the tenant boundary of the admin API (ADMIN-API.md "Teams", DESIGN §11).
--
--   team        one row per team: name (^[a-z][a-z0-9_-]{0,63}$), description, max_running
--               (NULL = no limit), the executor key version and until when the previous
--               version stays valid during a rotation. The row `default` always exists.
--   task.team   the owning team, NOT NULL DEFAULT 'default': every existing task moves into
--               `default`. A foreign key to team(name) makes "the team must exist" and "a team
--               that owns tasks cannot be deleted" one conditional write each (habit 5), not a
--               check that races with a concurrent create.
--   instances   no column: an instance's team is its task's, joined by the immutable task_id
--               (task PK lookups per listed row). An instance whose task was deleted has no
--               team; only tokens of "*" see it.
--   api_token   teams JSON NOT NULL (existing tokens get ["*"]); live_name = the name while the
--               token is not revoked, with a UNIQUE key: names are unique among live tokens, a
--               revoked token's name can be reused. Live duplicates from before (names were not
--               unique) keep working: all but the newest get "#<id>" appended to their name.
--   audit_log   actor_token_id (the token's id; NULL for HMAC callers and entries from before)
--               and team (the team of the target; NULL for global targets: tokens, teams,
--               dispatch pause), by which audit reads are filtered to a token's teams.
--
-- MySQL 8 has no ADD COLUMN IF NOT EXISTS: if the process dies between the ALTERs, re-running
-- the file fails on the first ALTER already applied; apply what is missing and record the file
-- by hand then (as 0002).

CREATE TABLE IF NOT EXISTS team (
  name                     VARCHAR(64)   NOT NULL COMMENT '^[a-z][a-z0-9_-]{0,63}$',
  description              VARCHAR(2048) NOT NULL DEFAULT '',
  max_running              INT UNSIGNED  NULL COMMENT 'most DISPATCHED or RUNNING instances at once; NULL = no limit',
  key_version              INT UNSIGNED  NOT NULL DEFAULT 1 COMMENT 'current executor key version',
  previous_key_valid_until DATETIME(3)   NULL COMMENT 'the previous key version is accepted until then',
  created_at               DATETIME(3)   NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  updated_at               DATETIME(3)   NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

INSERT IGNORE INTO team (name, description) VALUES ('default', 'tasks created without a team');

ALTER TABLE task
  ADD COLUMN team VARCHAR(64) NOT NULL DEFAULT 'default' COMMENT 'owning team' AFTER name,
  ADD INDEX idx_task_team (team, name),
  ADD CONSTRAINT fk_task_team FOREIGN KEY (team) REFERENCES team (name);

ALTER TABLE api_token
  ADD COLUMN teams JSON NULL COMMENT 'team names the token acts for, or ["*"]' AFTER role;

UPDATE api_token SET teams = '["*"]' WHERE teams IS NULL;

ALTER TABLE api_token
  MODIFY COLUMN teams JSON NOT NULL COMMENT 'team names the token acts for, or ["*"]';

UPDATE api_token t
  JOIN (SELECT name, MAX(id) AS keep_id FROM api_token WHERE revoked_at IS NULL GROUP BY name HAVING COUNT(*) > 1) d
    ON d.name = t.name AND t.id <> d.keep_id AND t.revoked_at IS NULL
   SET t.name = LEFT(CONCAT(t.name, '#', t.id), 128);

ALTER TABLE api_token
  ADD COLUMN live_name VARCHAR(128) GENERATED ALWAYS AS (IF(revoked_at IS NULL, name, NULL)) STORED,
  ADD UNIQUE KEY uk_api_token_live_name (live_name);

ALTER TABLE audit_log
  ADD COLUMN actor_token_id BIGINT UNSIGNED NULL COMMENT 'the token id of the actor' AFTER actor,
  ADD COLUMN team VARCHAR(64) NULL COMMENT 'team of the target; NULL = global' AFTER target,
  ADD INDEX idx_audit_team_at (team, at);

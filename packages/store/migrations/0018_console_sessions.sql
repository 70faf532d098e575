-- 0018_console_sessions: the console's server-side sign-in sessions (#47 "signing in once serves
-- every tab", #48 OIDC sign-in). The browser holds only a random session id in an HttpOnly
-- cookie; this table, shared by every admin-api instance, holds what it stands for.
--
--   console_session   one row per signed-in browser. Keyed by the hex SHA-256 of the cookie
--                     value (the value itself is never stored). Either a token sign-in
--                     (`token_id`: the API token pasted once; its role, teams and revocation are
--                     read through it on every request, so revoking the token ends the session)
--                     or an OIDC sign-in (`oidc_subject`, `oidc_groups`: the claim values, mapped
--                     to a role and teams by the current AX_OIDC_ROLE_MAP on every request, so a
--                     group removed from the map ends the session). `csrf_token` is the
--                     double-submit value the console sends in `X-AX-CSRF` on writes.
--                     `last_seen_at` (idle lifetime) and `expires_at` (absolute lifetime) are
--                     checked by the admin API; sign-out deletes the row.
--
-- Expand only (R22): builds before this one never name the table.

CREATE TABLE IF NOT EXISTS console_session (
  id_hash      CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL COMMENT 'hex SHA-256 of the cookie value',
  csrf_token   VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL COMMENT 'sent back in X-AX-CSRF on writes',
  token_id     BIGINT UNSIGNED NULL COMMENT 'token sign-in: the API token it was exchanged for',
  oidc_subject VARCHAR(255)    NULL COMMENT 'OIDC sign-in: the issuer''s sub',
  name         VARCHAR(128)    NOT NULL COMMENT 'the actor of audit entries',
  oidc_groups  JSON            NULL COMMENT 'OIDC sign-in: the role claim''s values',
  created_at   DATETIME(3)     NOT NULL,
  last_seen_at DATETIME(3)     NOT NULL,
  expires_at   DATETIME(3)     NOT NULL COMMENT 'absolute end of the session',
  PRIMARY KEY (id_hash),
  KEY idx_console_session_expires (expires_at),
  CONSTRAINT fk_console_session_token FOREIGN KEY (token_id) REFERENCES api_token (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- 0012_alert_routes: a team's own alert routes, and delivery state per route (#45).
--
--   team.alert_routes   `[{"url","format","kinds"?}]` (ADMIN-API.md "Teams"): where that
--                       team's alerts go besides the platform's AX_ALERT_WEBHOOK_URL; NULL =
--                       none. Written and read only by queries/team-alert-routes.ts.
--   alert_delivery      one row per (alert, route) the broker's alert loop has tried:
--                       `platform` (AX_ALERT_WEBHOOK_URL) or `team:<key>` (a team route, keyed
--                       by a hash of its URL and format, so an edited route is a new route),
--                       its state (`sent`, `failed` while retried, `gave_up` after the attempt
--                       cap, `not_configured` for an alert that had no route at all), the
--                       attempts and the last error. `alert_log.delivered_at` is set once every
--                       route of the alert is final, so a route that keeps failing is visible
--                       here and is not retried forever. Rows go with their alert.
--
-- Expand only (R22): a build before this one delivers to the platform webhook and sets
-- delivered_at as before; its alerts simply have no delivery rows.

ALTER TABLE team
  ADD COLUMN alert_routes JSON NULL COMMENT '[{"url","format","kinds"?}]: the team''s own alert webhooks; NULL = none';

CREATE TABLE IF NOT EXISTS alert_delivery (
  alert_id     BIGINT UNSIGNED NOT NULL,
  route        VARCHAR(64)     NOT NULL COMMENT 'platform | team:<hash of url and format> | none',
  target       VARCHAR(255)    NOT NULL DEFAULT '' COMMENT 'scheme://host of the webhook (never its path: it may hold a token)',
  format       VARCHAR(16)     NOT NULL DEFAULT 'generic',
  state        VARCHAR(16)     NOT NULL COMMENT 'sent | failed | gave_up | not_configured',
  attempts     INT UNSIGNED    NOT NULL DEFAULT 0,
  last_error   VARCHAR(512)    NULL,
  updated_at   DATETIME(3)     NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (alert_id, route),
  CONSTRAINT fk_alert_delivery_alert FOREIGN KEY (alert_id) REFERENCES alert_log (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

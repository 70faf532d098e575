/**
 * `team.alert_routes` (migration 0012): the webhooks a team's alerts go to besides the
 * platform's (ADMIN-API.md "Teams"). Kept apart from the team record: only the team API and the
 * broker's alert loop read them. On a schema before 0012 (R22) no team has routes and setting
 * them is refused by the caller's migration check, not here.
 */
import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import { alertRoutesSchema, type AlertRoute } from '@ax/core';
import { isNoSuchColumnError } from '../errors.js';
import { decodeJsonNullable } from '../json.js';
import type { Queryable } from '../schema-version.js';

function decodeRoutes(value: unknown): AlertRoute[] {
  // Stored by setTeamAlertRoutes from validated input; parsed again so a hand edit cannot crash the loop.
  const parsed = alertRoutesSchema.safeParse(decodeJsonNullable(value) ?? []);
  return parsed.success ? parsed.data : [];
}

/** The alert routes of these teams (teams without routes are absent). */
export async function getTeamsAlertRoutes(db: Queryable, teams: readonly string[]): Promise<Map<string, AlertRoute[]>> {
  const out = new Map<string, AlertRoute[]>();
  if (teams.length === 0) return out;
  try {
    const [rows] = await db.query<RowDataPacket[]>('SELECT name, alert_routes FROM team WHERE name IN (?) AND alert_routes IS NOT NULL', [teams]);
    for (const row of rows) {
      const routes = decodeRoutes(row['alert_routes']);
      if (routes.length > 0) out.set(String(row['name']), routes);
    }
  } catch (err) {
    if (!isNoSuchColumnError(err)) throw err;
  }
  return out;
}

/** Replaces a team's routes (empty: none); false when the team does not exist. */
export async function setTeamAlertRoutes(db: Queryable, team: string, routes: readonly AlertRoute[]): Promise<boolean> {
  const [result] = await db.query<ResultSetHeader>('UPDATE team SET alert_routes = ?, updated_at = CURRENT_TIMESTAMP(3) WHERE name = ?', [
    routes.length === 0 ? null : JSON.stringify(routes),
    team,
  ]);
  return result.affectedRows === 1;
}

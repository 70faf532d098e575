/**
 * A team's `maxRunning` at claim (ADMIN-API.md "Teams", DESIGN §11): the broker locks the rows of
 * the limited teams it is about to dispatch for (`FOR UPDATE`, in name order) and counts their
 * DISPATCHED or RUNNING instances after the lock, inside its claim transaction. Every broker
 * dispatching for a limited team holds that team's row until its commit, so the count it reads
 * under READ COMMITTED includes every run another broker committed: two brokers cannot both take
 * the last allowed run. Nothing here runs for a team without a limit.
 */
import type { RowDataPacket } from 'mysql2';
import type { Queryable } from '../schema-version.js';
import { instanceTeamSql } from './instances-read.js';

/**
 * DISPATCHED or RUNNING instances per team, for these teams, or for every team when `teams` is
 * absent (absent from the map: none). An instance's team is its row's (0010); a row of a build
 * before 0010 has none and counts for its task's team. A plain read: before the claim it is a
 * hint (which teams to leave out of the claim, the fair share); after {@link lockTeamLimits}, in
 * a READ COMMITTED transaction, it is the count the decision is made on.
 */
export async function activeRunsByTeam(db: Queryable, teams?: readonly string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (teams !== undefined && teams.length === 0) return out;
  const [rows] = await db.query<RowDataPacket[]>(
    `SELECT team, COUNT(*) AS n
       FROM (SELECT ${instanceTeamSql('i')} AS team
               FROM task_instance i WHERE i.state IN ('DISPATCHED', 'RUNNING')) a
      WHERE team IS NOT NULL${teams === undefined ? '' : ' AND team IN (?)'}
      GROUP BY team`,
    teams === undefined ? [] : [[...new Set(teams)]],
  );
  for (const r of rows) out.set(String(r.team), Number(r.n));
  return out;
}

/**
 * Locks the rows of these teams (`FOR UPDATE`, in name order, so two brokers locking
 * overlapping sets never deadlock on each other) and returns the `maxRunning` of those that
 * still have one, as stored now (a limit raised or removed since the caller's cached view
 * applies at once). Call inside the claim transaction, after the instance and task locks.
 */
export async function lockTeamLimits(conn: Queryable, teams: readonly string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (teams.length === 0) return out;
  const names = [...new Set(teams)].sort();
  const [rows] = await conn.query<RowDataPacket[]>(`SELECT name, max_running FROM team WHERE name IN (?) ORDER BY name FOR UPDATE`, [names]);
  for (const r of rows) if (r.max_running != null) out.set(String(r.name), Number(r.max_running));
  return out;
}

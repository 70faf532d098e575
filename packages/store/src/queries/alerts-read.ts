/**
 * Reading `alert_log` for the alert history (`GET /api/v1/alerts`): newest first, filtered,
 * and confined to teams. An alert belongs to the team of its instance's task, else of the task
 * it names; one of neither (a worker, the clock, a deleted task) belongs to no team and is
 * shown to tokens of every team only.
 */
import type { RowDataPacket } from 'mysql2';
import type { Queryable } from '../schema-version.js';
import { instanceTeamSql } from './instances-read.js';

/** An alert as stored. */
export interface AlertRecord {
  readonly id: string;
  readonly kind: string;
  readonly severity: 'critical' | 'warning';
  /** The team it belongs to (see the module comment), or null. */
  readonly team: string | null;
  readonly instanceId: string | null;
  readonly taskName: string | null;
  readonly workerId: string | null;
  readonly reason: string | null;
  readonly message: string;
  readonly at: Date;
  /** When the webhook took it (or it was logged without a webhook); null until then. */
  readonly deliveredAt: Date | null;
}

/** Filters and page of {@link listAlerts}. */
export interface ListAlertsOptions {
  /** `null`: every team. */
  readonly teams: readonly string[] | null;
  readonly kinds?: readonly string[];
  readonly taskName?: string;
  readonly severity?: 'critical' | 'warning';
  /** `true`: delivered only; `false`: not yet delivered only. */
  readonly delivered?: boolean;
  /** Raised at or after. */
  readonly from?: Date;
  /** Raised before. */
  readonly to?: Date;
  readonly beforeId?: string;
  readonly limit: number;
}

/** SQL: the team of alert `a`: its instance's ({@link instanceTeamSql}) first, else its task's by name. */
export const ALERT_TEAM_SQL = `COALESCE(
    (SELECT ${instanceTeamSql('ai')} FROM task_instance ai WHERE ai.id = a.instance_id),
    (SELECT nt.team FROM task nt WHERE nt.name = a.task_name))`;

/** Alerts newest first. */
export async function listAlerts(db: Queryable, opts: ListAlertsOptions): Promise<AlertRecord[]> {
  const where: string[] = [];
  const values: unknown[] = [];
  const add = (sql: string, ...v: unknown[]): void => {
    where.push(sql);
    values.push(...v);
  };
  if (opts.teams !== null) {
    if (opts.teams.length === 0) add('FALSE');
    else add(`${ALERT_TEAM_SQL} IN (?)`, opts.teams);
  }
  if (opts.kinds !== undefined && opts.kinds.length > 0) add('a.kind IN (?)', opts.kinds);
  if (opts.taskName !== undefined) add('a.task_name = ?', opts.taskName);
  if (opts.severity !== undefined) add('a.severity = ?', opts.severity);
  if (opts.delivered !== undefined) add(opts.delivered ? 'a.delivered_at IS NOT NULL' : 'a.delivered_at IS NULL');
  if (opts.from !== undefined) add('a.at >= ?', opts.from);
  if (opts.to !== undefined) add('a.at < ?', opts.to);
  if (opts.beforeId !== undefined) add('a.id < ?', opts.beforeId);
  const [rows] = await db.query<RowDataPacket[]>(
    `SELECT a.id, a.kind, a.severity, a.instance_id, a.task_name, a.worker_id, a.reason, a.message, a.at, a.delivered_at,
            ${ALERT_TEAM_SQL} AS team
       FROM alert_log a ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
      ORDER BY a.id DESC LIMIT ?`,
    [...values, opts.limit],
  );
  return rows.map((r) => ({
    id: String(r['id']),
    kind: String(r['kind']),
    severity: r['severity'] === 'critical' ? 'critical' : 'warning',
    team: (r['team'] as string | null) ?? null,
    instanceId: r['instance_id'] == null ? null : String(r['instance_id']),
    taskName: (r['task_name'] as string | null) ?? null,
    workerId: (r['worker_id'] as string | null) ?? null,
    reason: (r['reason'] as string | null) ?? null,
    message: String(r['message'] ?? ''),
    at: r['at'] as Date,
    deliveredAt: (r['delivered_at'] as Date | null) ?? null,
  }));
}

/**
 * Delivery side of the `alert_log` outbox (DESIGN §7): the broker's alert loop reads rows not
 * yet delivered, records each route's attempt in `alert_delivery` (migration 0012), and marks
 * the alert delivered with a conditional UPDATE once every route of it is final.
 */
import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import { isNoSuchTableError } from '../errors.js';
import type { Queryable } from '../schema-version.js';
import { ALERT_TEAM_SQL } from './alerts-read.js';

/** An alert row waiting for delivery. */
export interface PendingAlert {
  readonly id: string;
  readonly kind: string;
  readonly severity: 'critical' | 'warning';
  readonly instanceId: string | null;
  readonly taskName: string | null;
  readonly workerId: string | null;
  /** The alert's reason label, or null (migration 0005). */
  readonly reason?: string | null;
  readonly message: string;
  readonly at: Date;
  /** The team it belongs to (alerts-read.ts), or null: its routes are that team's. */
  readonly team?: string | null;
}

/** Up to `limit` undelivered alerts, oldest first. */
export async function listUndeliveredAlerts(db: Queryable, limit: number): Promise<PendingAlert[]> {
  const [rows] = await db.query<RowDataPacket[]>(
    `SELECT a.id, a.kind, a.severity, a.instance_id, a.task_name, a.worker_id, a.reason, a.message, a.at, ${ALERT_TEAM_SQL} AS team
       FROM alert_log a WHERE a.delivered_at IS NULL ORDER BY a.id LIMIT ?`,
    [limit],
  );
  return rows.map((r) => ({
    id: String(r.id),
    kind: String(r.kind),
    severity: r.severity === 'critical' ? 'critical' : 'warning',
    instanceId: r.instance_id == null ? null : String(r.instance_id),
    taskName: (r.task_name as string | null) ?? null,
    workerId: (r.worker_id as string | null) ?? null,
    reason: (r.reason as string | null) ?? null,
    message: String(r.message ?? ''),
    at: r.at as Date,
    team: (r.team as string | null) ?? null,
  }));
}

/** Marks an alert delivered; false when another broker already did. */
export async function markAlertDelivered(db: Queryable, id: string): Promise<boolean> {
  const [result] = await db.query<ResultSetHeader>(
    `UPDATE alert_log SET delivered_at = NOW(3) WHERE id = ? AND delivered_at IS NULL`,
    [id],
  );
  return result.affectedRows === 1;
}

/** Delivery states of one route of an alert. */
export type AlertRouteState = 'sent' | 'failed' | 'gave_up' | 'not_configured';

/** One route's delivery record. */
export interface AlertDeliveryRecord {
  readonly alertId: string;
  /** `platform`, `team:<hash>` or `none`. */
  readonly route: string;
  /** scheme://host of the webhook. */
  readonly target: string;
  readonly format: string;
  readonly state: AlertRouteState;
  readonly attempts: number;
  readonly lastError: string | null;
  readonly updatedAt: Date;
}

const STATES: ReadonlySet<string> = new Set(['sent', 'failed', 'gave_up', 'not_configured']);

/**
 * The delivery records of these alerts, by alert id; `null` on a schema before 0012 (R22: the
 * caller then delivers to the platform webhook alone, as before).
 */
export async function listAlertDeliveries(db: Queryable, alertIds: readonly string[]): Promise<Map<string, AlertDeliveryRecord[]> | null> {
  const out = new Map<string, AlertDeliveryRecord[]>();
  if (alertIds.length === 0) return out;
  let rows: RowDataPacket[];
  try {
    [rows] = await db.query<RowDataPacket[]>(
      `SELECT alert_id, route, target, format, state, attempts, last_error, updated_at
         FROM alert_delivery WHERE alert_id IN (?) ORDER BY alert_id, route = 'platform' DESC, route`,
      [alertIds],
    );
  } catch (err) {
    if (isNoSuchTableError(err)) return null;
    throw err;
  }
  for (const r of rows) {
    const id = String(r['alert_id']);
    const state = String(r['state']);
    const list = out.get(id) ?? [];
    list.push({
      alertId: id,
      route: String(r['route']),
      target: String(r['target'] ?? ''),
      format: String(r['format'] ?? 'generic'),
      state: (STATES.has(state) ? state : 'failed') as AlertRouteState,
      attempts: Number(r['attempts'] ?? 0),
      lastError: (r['last_error'] as string | null) ?? null,
      updatedAt: r['updated_at'] as Date,
    });
    out.set(id, list);
  }
  return out;
}

const LAST_ERROR_MAX_CHARS = 512;

/** Records one route's attempt (or `not_configured`), replacing its earlier record. */
export async function recordAlertDelivery(
  db: Queryable,
  record: { alertId: string; route: string; target: string; format: string; state: AlertRouteState; attempts: number; lastError: string | null },
): Promise<void> {
  await db.query(
    `INSERT INTO alert_delivery (alert_id, route, target, format, state, attempts, last_error)
     VALUES (?, ?, ?, ?, ?, ?, ?)
     ON DUPLICATE KEY UPDATE target = VALUES(target), format = VALUES(format), state = VALUES(state),
       attempts = VALUES(attempts), last_error = VALUES(last_error), updated_at = CURRENT_TIMESTAMP(3)`,
    [record.alertId, record.route, record.target.slice(0, 255), record.format, record.state, record.attempts, record.lastError?.slice(0, LAST_ERROR_MAX_CHARS) ?? null],
  );
}

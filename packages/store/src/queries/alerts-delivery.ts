/**
 * Delivery side of the `alert_log` outbox (DESIGN §7): the broker's alert loop reads rows not
 * yet delivered and marks each delivered with a conditional UPDATE once the webhook took it.
 */
import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import type { Queryable } from '../schema-version.js';

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
}

/** Up to `limit` undelivered alerts, oldest first. */
export async function listUndeliveredAlerts(db: Queryable, limit: number): Promise<PendingAlert[]> {
  const [rows] = await db.query<RowDataPacket[]>(
    `SELECT id, kind, severity, instance_id, task_name, worker_id, reason, message, at
       FROM alert_log WHERE delivered_at IS NULL ORDER BY id LIMIT ?`,
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

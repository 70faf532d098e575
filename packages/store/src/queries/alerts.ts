/**
 * `alert_log`: alerts are raised by inserting a row (an outbox in MySQL) and delivered to the
 * webhook by the broker's alert loop, which sets `delivered_at`. Raising never blocks on the
 * webhook, survives a crash of the raiser, and is deduplicated per subject and kind by the
 * unique `dedup_key` (DESIGN §7).
 */
import type { ResultSetHeader } from 'mysql2';
import type { Queryable } from '../schema-version.js';

/** Alert kinds of ADMIN-API.md ("Shapes of … alerts"). */
export type AlertKind =
  | 'FINAL_FAILURE'
  | 'LOST_WORKER'
  | 'NO_WORKER'
  | 'CLOCK_SKEW'
  | 'BACKLOG'
  | 'DID_NOT_FIRE'
  | 'LONG_RUNNING'
  | 'UPSTREAM_MISSING'
  | 'ACK_TIMEOUT'
  | 'SLA_MISSED'
  | 'TASK_PAUSED'
  | (string & {});

/** An alert to raise. */
export interface NewAlert {
  kind: AlertKind;
  severity: 'critical' | 'warning';
  /**
   * What the alert is about, for deduplication: one alert per (kind, subject). Defaults to
   * `instance:<instanceId>`; alerts without an instance name their subject, e.g.
   * `worker:<id>:<hour>` so a recurring condition alerts again later.
   */
  subject?: string;
  instanceId?: string | null;
  taskName?: string | null;
  workerId?: string | null;
  /** The alert's `reason` label (SLA_MISSED: `START` | `FINISH`; TASK_PAUSED: `FAILURES`). */
  reason?: string | null;
  /** One human sentence. */
  message: string;
}

const DEDUP_KEY_MAX_CHARS = 255;
const MESSAGE_MAX_CHARS = 2_048;

/** The dedup key of an alert: `<kind>:<subject>`. */
export function alertDedupKey(alert: NewAlert): string {
  const subject = alert.subject ?? (alert.instanceId != null ? `instance:${alert.instanceId}` : 'global');
  return `${alert.kind}:${subject}`.slice(0, DEDUP_KEY_MAX_CHARS);
}

/** Raises an alert; returns false when the same (kind, subject) was raised before. */
export async function raiseAlert(db: Queryable, alert: NewAlert): Promise<boolean> {
  const [result] = await db.query<ResultSetHeader>(
    `INSERT IGNORE INTO alert_log (dedup_key, kind, severity, instance_id, task_name, worker_id, reason, message)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      alertDedupKey(alert),
      alert.kind,
      alert.severity,
      alert.instanceId ?? null,
      alert.taskName ?? null,
      alert.workerId ?? null,
      alert.reason ?? null,
      alert.message.slice(0, MESSAGE_MAX_CHARS),
    ],
  );
  return result.affectedRows === 1;
}

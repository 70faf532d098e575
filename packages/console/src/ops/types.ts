/** Resources of the operations pages (#20): alerts, dead letters, the DAG grid (docs/admin-api.md "Extensions"). */
import type { InstanceState } from '../types';

/** How far an alert's webhook delivery got. */
export type AlertDelivery = 'pending' | 'sent' | 'failed';

/** One alert of `GET /api/v1/alerts`. */
export interface Alert {
  id: string;
  kind: string;
  severity: 'critical' | 'warning';
  team?: string;
  taskName?: string;
  instanceId?: string;
  workerId?: string;
  reason?: string;
  message: string;
  at: string;
  delivery: AlertDelivery;
  attempts: number;
  deliveredAt: string | null;
}

/** One dead letter of `GET /api/v1/dead-letters` (a message RabbitMQ could not deliver or a consumer refused). */
export interface DeadLetter {
  id: string;
  at: string;
  sourceQueue: string;
  reason: string;
  /** The message body as text (null when it was not kept). */
  payload: string | null;
  headers: unknown;
}

/** One cell of `GET /api/v1/dag/grid`: the latest slot of a task on a business date. */
export interface GridCell {
  task: string;
  bizDate: string;
  instanceId: string;
  state: InstanceState;
  expectedTime: string;
  durationMs: number | null;
  /** Slots the task has on that date (several cron fires a day). */
  slots: number;
}

/** `GET /api/v1/dag/grid`. */
export interface DagGrid {
  root: string | null;
  days: number;
  /** Oldest first. */
  bizDates: string[];
  /** Parents first. */
  tasks: string[];
  cells: GridCell[];
}

/** What `POST /api/v1/reruns` answers when it ran (not a dry run). */
export interface RerunStarted {
  batchId?: string;
  instances: string[];
}

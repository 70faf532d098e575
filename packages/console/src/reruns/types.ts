/** Rerun and backfill batches as `GET /api/v1/reruns` and `/reruns/{batchId}` answer them (ADMIN-API.md, with the extensions). */
import type { InstanceState } from '../types';

export type BatchMode = 'instance' | 'dag' | 'failed' | 'backfill';

/** `running` while an instance is not final; `canceled` once canceled (its running ones may still finish); else `done`. */
export type BatchState = 'running' | 'done' | 'canceled';

export interface RerunBatch {
  id: string;
  mode: BatchMode;
  state: BatchState;
  reason: string;
  /** Name of the token that started it. */
  actor: string;
  createdAt: string;
  total: number;
  /** Instances of the batch by state; every state present, adding up to `total`. */
  counts: Record<InstanceState, number>;
  /** Extension: instances in a final state. */
  finished?: number;
  /** Extension: finished / total, 0 to 1. */
  progress?: number;
  /** Extension: backfill: most instances running at once (null: no limit). */
  concurrency?: number | null;
  forceDownstream?: boolean;
  /** Extension: the request body as accepted (a backfill's `task`, `from`, `to`). */
  request?: Record<string, unknown>;
  canceledAt?: string | null;
  canceledBy?: string | null;
}

/** `POST /api/v1/reruns` without `dryRun`: 202. */
export interface RerunStarted {
  batchId: string;
  instances: string[];
}

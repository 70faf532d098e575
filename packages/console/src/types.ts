/** The API resources the console reads (ADMIN-API.md and docs/admin-api.md "Extensions"). */

export type Role = 'viewer' | 'operator' | 'admin';

export interface Principal {
  name: string;
  role: Role;
  /** The teams the token acts for (`["*"]`: every team); absent from older APIs. */
  teams?: string[];
}

export const FINAL_STATES = ['SUCCESS', 'FAILED', 'CANCELED'] as const;

export type InstanceState = 'WAITING' | 'PENDING' | 'DISPATCHED' | 'RUNNING' | 'RETRY_WAIT' | 'SUCCESS' | 'FAILED' | 'CANCELED';

export interface Schedule {
  type: 'cron' | 'fixed_rate' | 'once' | 'none';
  expr?: string;
  everySeconds?: number;
  at?: string;
  timezone?: string;
}

export interface Task {
  name: string;
  description: string;
  /** The owning team. */
  team: string;
  owner: string;
  schedule: Schedule;
  exec: { type: string; [key: string]: unknown };
  params: Record<string, unknown>;
  tags: string[];
  priority: number;
  timeoutSeconds: number;
  retry: { max: number; backoffSeconds: number; factor: number; jitterSeconds: number };
  misfire: { policy: string; max?: number };
  block: string | { queue: number };
  jitterSeconds?: number;
  pauseAfterFailures?: number | null;
  sla?: { startWithinSeconds?: number; finishWithinSeconds?: number } | null;
  pausedReason?: string | null;
  calendar?: string | null;
  calendarSkippedCount?: number;
  route: string;
  enabled: boolean;
  version: number;
  createdAt: string;
  updatedAt: string;
  nextFireTime: string | null;
  lastFireTime: string | null;
}

export interface Instance {
  id: string;
  taskName: string;
  expectedTime: string;
  bizDate: string;
  trigger: string;
  runNo: number;
  state: InstanceState;
  reason: string | null;
  attempt: number;
  maxAttempts: number;
  priority: number;
  params: Record<string, unknown>;
  workerId: string | null;
  currentExecutionId: string | null;
  createdAt: string;
  startedAt: string | null;
  endedAt: string | null;
  /** The team of its task (null: the task was deleted). */
  team: string | null;
}

/** A team (`GET /api/v1/teams` lists those the token covers). */
export interface Team {
  name: string;
  description: string;
  maxRunning: number | null;
  keyVersion: number;
  createdAt: string;
  updatedAt: string;
}

export interface Execution {
  executionId: string;
  attempt: number;
  runNo: number;
  shardIndex: number | null;
  shardTotal: number | null;
  workerId: string | null;
  state: string;
  reason: string | null;
  dispatchedAt: string;
  ackedAt: string | null;
  startedAt: string | null;
  endedAt: string | null;
  exitCode: number | null;
  outputTail: string | null;
  outputTruncated: boolean;
  error: string | null;
  /** Bytes of its log (both streams) stored so far (instance detail only; absent from older APIs). */
  logSize?: number;
}

export interface InstanceEvent {
  type: string;
  at: string;
  executionId?: string;
  workerId?: string;
  message?: string;
  data?: Record<string, unknown>;
}

export interface InstanceDetail extends Instance {
  executions: Execution[];
  events: InstanceEvent[];
  outputTail: string | null;
}

export interface Worker {
  id: string;
  host: string;
  tags: string[];
  cores: number;
  slots: number;
  running: number;
  avgDurationMs: number;
  lastHeartbeat: string;
  state: 'active' | 'draining';
  version?: string;
  clockOffsetMs?: number | null;
  /** The teams it serves (`["*"]` = every team); absent from older APIs. */
  teams?: string[];
}

export interface TodayStats {
  day: string;
  total: number;
  succeeded: number;
  failed: number;
  running: number;
  avgTriggerDelayMs: number | null;
  maxDurationMs: number | null;
  topFailing: Array<{ task: string; count: number }>;
}

export interface HourStats {
  hour: string;
  runs: number;
  succeeded: number;
  failed: number;
  avgFireLagMs: number | null;
  avgTriggerDelayMs: number | null;
}

export interface Dag {
  nodes: string[];
  edges: Array<{ parent: string; child: string; rule: string }>;
}

export interface AuditEntry {
  id: string;
  at: string;
  /** Who did it: the token's id (null for HMAC callers `executor:<team>`) and its name then. */
  actor: { tokenId: string | null; name: string };
  /** The actor token's id (null: an HMAC caller or an older entry). */
  actorTokenId: string | null;
  action: string;
  target: string;
  /** The team of the target; absent for global targets. */
  team?: string;
  reason?: string;
  before?: unknown;
  after?: unknown;
}

/** One line of a rerun dry run. */
export interface RerunPlanItem {
  action: 'rerun' | 'create';
  id?: string;
  taskName: string;
  expectedTime: string;
  bizDate: string;
  from?: string;
  state: string;
  runNo?: number;
}

/** Which output of an execution a log request reads (ADMIN-API.md "Job output (logs)"). */
export type LogView = 'all' | 'stdout' | 'stderr';

/** The `X-Ax-Log-*` headers of `GET …/executions/{id}/log` (with the extensions). */
export interface LogPageHeaders {
  /** `X-Ax-Log-Size`: bytes of the view readable so far (the full size once complete). */
  size: number;
  /** `X-Ax-Log-Complete`: the execution is final and all its output is stored. */
  complete: boolean;
  /** `X-Ax-Log-Truncated`: output past AX_LOG_MAX_BYTES was dropped. */
  truncated: boolean;
  /** `X-Ax-Log-Offset`: position of the body's first byte. */
  offset: number;
  /** `X-Ax-Log-Next-Offset`: where the next page starts. */
  nextOffset: number;
}

/** `event: chunk` of `GET …/log/stream` (its `id:` is the offset after the chunk). */
export interface LogChunkEvent {
  stream: 'stdout' | 'stderr';
  offset: number;
  text: string;
}

/** `event: end` of `GET …/log/stream`. */
export interface LogEndEvent {
  size: number;
  truncated: boolean;
  /** Extension: false when the execution ended but its output stayed incomplete. */
  complete?: boolean;
}

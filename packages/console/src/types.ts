/** The API resources the console reads (ADMIN-API.md and docs/admin-api.md "Extensions"). */

import type * as Api from '@ax/api-types';

// CONVENTIONS: a response type is never written here. Each comes from @ax/api-types, generated
// from admin-api's OpenAPI document (`pnpm gen:api-types`), the same types axctl reads: this
// file only keeps the names the pages import. What the server sends but its document does not
// describe is added beside the generated type, marked as such.

export type Role = Api.Role;

/**
 * What the console keeps of `GET /api/v1/whoami` (session.tsx, also from a stored copy): the
 * token's name, role and the teams it acts for (`["*"]`: every team; absent from older copies).
 */
export type Principal = Pick<Api.WhoAmI, 'name' | 'role'> & Partial<Pick<Api.WhoAmI, 'teams'>>;

export const FINAL_STATES = ['SUCCESS', 'FAILED', 'CANCELED'] as const;

export type InstanceState = Api.InstanceState;

export type Schedule = Api.Schedule;

export type Task = Api.Task;

/** One kept definition of a task (`GET /api/v1/tasks/{name}/versions`). */
export type TaskVersion = Api.TaskVersion;

export type Instance = Api.Instance;

/** A team (`GET /api/v1/teams` lists those the token covers). */
export type Team = Api.Team;

export type Execution = Api.Execution;

export type InstanceEvent = Api.InstanceEvent;

export type InstanceDetail = Api.InstanceDetail;

/**
 * A worker of `GET /api/v1/workers`. The server also sends `version` and `clockOffsetMs`, which
 * the route's response schema does not declare (yet): they are added here, optional.
 */
export type Worker = Api.Worker & { version?: string; clockOffsetMs?: number | null };

/** `GET /api/v1/status`: pause, workers, backlog, late runs of the token's teams. */
export type Status = Api.ResponseOf<'GET /api/v1/status'>;

export type TodayStats = Api.TodayStats;

export type HourStats = Api.HourStats;

export type Dag = Api.DagGraph;

export type AuditEntry = Api.AuditEntry;

/**
 * One line of a rerun dry run. The document types `POST /api/v1/reruns`'s plan items only as
 * objects (`{[key: string]: unknown}[]`), so this UI-side reading of them stays here.
 */
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

/** `POST /api/v1/reruns` with `dryRun`: 200, the plan (its items read as {@link RerunPlanItem}). */
export type RerunPlan = Omit<Api.RerunPlan, 'instances'> & { instances: RerunPlanItem[] };

/** `POST /api/v1/reruns` without `dryRun`: 202 (`batchId` null when nothing was started). */
export type RerunStarted = Api.RerunStarted;

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

/** An API token without its secret (`GET /api/v1/tokens`). */
export type ApiToken = Api.ApiToken;

/** `POST /api/v1/tokens`: the token with its secret, shown once. */
export type CreatedApiToken = Api.ResponseOf<'POST /api/v1/tokens'>;

/** A calendar: dates a team's tasks naming it do not fire on (`GET /api/v1/calendars`). */
export type Calendar = Api.Calendar;

/** A worker enrollment without its credential (`GET /api/v1/workers/enrollments`). */
export type WorkerEnrollment = Api.WorkerEnrollment;

/** `POST /api/v1/workers/enrollments`: the enrollment with its credential, shown once. */
export type CreatedWorkerEnrollment = Api.CreatedWorkerEnrollment;

/**
 * The types of the ax admin API, shared by the console and axctl (types only: no runtime code).
 *
 * `generated.ts` is generated from the OpenAPI document (`pnpm build && pnpm gen:api-types`);
 * the names below are the resources both clients read, each derived from an operation's
 * response, so no response type is written by hand twice. A client imports them with
 * `import type`: nothing of this package reaches a bundle.
 */
import type { Operations, Schemas } from './generated.js';

export type { OperationKey, Operations, Schemas } from './generated.js';

/** The success body of an operation. */
export type ResponseOf<K extends keyof Operations> = Operations[K]['response'];
/** The JSON body of an operation's request. */
export type BodyOf<K extends keyof Operations> = Operations[K]['body'];
/** The query parameters of an operation. */
export type QueryOf<K extends keyof Operations> = Operations[K]['query'];

/** A page of a list (`{items, nextCursor}`). */
type ItemOf<K extends keyof Operations> = ResponseOf<K> extends { items: Array<infer T> } ? T : never;

/** `{error: {code, message, details}}` of every failure. */
export type ApiError = Schemas['Error'];

export type Health = ResponseOf<'GET /readyz'>;
export type WhoAmI = ResponseOf<'GET /api/v1/whoami'>;
export type Role = WhoAmI['role'];

/**
 * The output of a few task fields is a zod transform, which `z.toJSONSchema` can only write as
 * `{}` (any): `tags` (deduplicated tag list) and the schedule's `at` / `startAt` (ISO instants).
 * Their output types are restated here, once, for both clients, until admin-api's response
 * schemas describe them (see docs/admin-api.md).
 */
type KnownSchedule<S> = S extends { type: 'once' }
  ? Omit<S, 'at'> & { at: string }
  : S extends { type: 'fixed_rate' }
    ? Omit<S, 'startAt'> & { startAt?: string }
    : S;
type KnownTask<T extends { tags: unknown; schedule: unknown }> = Omit<T, 'tags' | 'schedule'> & {
  tags: string[];
  schedule: KnownSchedule<T['schedule']>;
};

export type Task = KnownTask<ResponseOf<'GET /api/v1/tasks/{name}'>>;
/** An item of `GET /api/v1/tasks` (a task with its `lastRun`). */
export type TaskListItem = KnownTask<ItemOf<'GET /api/v1/tasks'>>;
export type TaskPage = Omit<ResponseOf<'GET /api/v1/tasks'>, 'items'> & { items: TaskListItem[] };
export type TaskPreview = ResponseOf<'GET /api/v1/tasks/{name}/preview'>;
export type TaskImport = ResponseOf<'POST /api/v1/tasks/import'>;
export type Schedule = Task['schedule'];
/** One kept definition of a task (`GET /api/v1/tasks/{name}/versions/{v}`), and a page of them. */
export type TaskVersion = ResponseOf<'GET /api/v1/tasks/{name}/versions/{v}'>;
export type TaskVersionPage = ResponseOf<'GET /api/v1/tasks/{name}/versions'>;

export type Calendar = ResponseOf<'GET /api/v1/calendars/{name}'>;
export type CalendarPage = ResponseOf<'GET /api/v1/calendars'>;

export type DagGraph = ResponseOf<'GET /api/v1/dag'>;
export type DagEdge = DagGraph['edges'][number];
export type DagGrid = ResponseOf<'GET /api/v1/dag/grid'>;
export type DagGridCell = DagGrid['cells'][number];

export type Instance = ItemOf<'GET /api/v1/instances'>;
export type InstancePage = ResponseOf<'GET /api/v1/instances'>;
export type InstanceState = Instance['state'];
export type InstanceDetail = ResponseOf<'GET /api/v1/instances/{id}'>;
export type Execution = InstanceDetail['executions'][number];
export type InstanceEvent = InstanceDetail['events'][number];

/** `POST /api/v1/reruns`: a dry run's plan (200) or the started batch (202). */
export type RerunAnswer = ResponseOf<'POST /api/v1/reruns'>;
export type RerunPlan = Operations['POST /api/v1/reruns']['responses'][200];
export type RerunStarted = Operations['POST /api/v1/reruns']['responses'][202];
export type RerunBatch = ResponseOf<'GET /api/v1/reruns/{batchId}'>;
export type RerunBatchPage = ResponseOf<'GET /api/v1/reruns'>;
export type RerunBatchInstancePage = ResponseOf<'GET /api/v1/reruns/{batchId}/instances'>;

export type Worker = ItemOf<'GET /api/v1/workers'>;
export type WorkerPage = ResponseOf<'GET /api/v1/workers'>;
export type WorkerEnrollment = ItemOf<'GET /api/v1/workers/enrollments'>;
export type WorkerEnrollmentPage = ResponseOf<'GET /api/v1/workers/enrollments'>;
/** A created enrollment: its credential is in this answer only. */
export type CreatedWorkerEnrollment = ResponseOf<'POST /api/v1/workers/enrollments'>;
export type DispatchState = ResponseOf<'GET /api/v1/dispatch'>;

export type TodayStats = ResponseOf<'GET /api/v1/stats/today'>;
export type HourlyStats = ResponseOf<'GET /api/v1/stats/hourly'>;

export type DeadLetter = ItemOf<'GET /api/v1/dead-letters'>;
export type DeadLetterPage = ResponseOf<'GET /api/v1/dead-letters'>;
export type Alert = ItemOf<'GET /api/v1/alerts'>;
export type AlertPage = ResponseOf<'GET /api/v1/alerts'>;
export type AuditEntry = ItemOf<'GET /api/v1/audit'>;
export type AuditPage = ResponseOf<'GET /api/v1/audit'>;

export type ApiToken = ItemOf<'GET /api/v1/tokens'>;
export type Team = ItemOf<'GET /api/v1/teams'>;
export type TeamPage = ResponseOf<'GET /api/v1/teams'>;
export type HourStats = HourlyStats['hours'][number];

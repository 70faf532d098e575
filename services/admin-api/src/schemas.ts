/** zod schemas shared by the routes (validation and the OpenAPI document). */
import { z } from 'zod';
import { INSTANCE_STATES, TASK_NAME_PATTERN, WAITING_REASONS, taskDefinitionSchema } from '@ax/core';

/** A task name (path or body). */
export const taskNameSchema = z
  .string()
  .regex(TASK_NAME_PATTERN, 'must be a task name: lower-case letters, digits, "_", "-", "." (1 to 128, starting with a letter or digit)');

/** `{name}` path parameter. */
export const nameParams = z.object({ name: z.string().max(256) });

/** `{id}` path parameter. */
export const idParams = z.object({ id: z.string().max(64) });

/** A business date `YYYY-MM-DD`. */
export const bizDateSchema = z.iso.date({ error: 'must be a date YYYY-MM-DD' });

/** An ISO-8601 instant. */
export const instantSchema = z.iso.datetime({ offset: true, error: 'must be an ISO-8601 date-time, e.g. 2026-12-01T02:00:00.000Z' });

/** Reason of a rerun or another operator action. */
export const reasonSchema = z.string().trim().min(1, 'must not be empty').max(2048);

/** The error body. */
export const errorSchema = z.object({
  error: z.object({
    code: z.string().describe('UPPER_SNAKE code'),
    message: z.string(),
    details: z.record(z.string(), z.unknown()),
  }),
});

/** `{items, nextCursor}`. */
export function listOf(item: z.ZodType): z.ZodType {
  return z.object({ items: z.array(item), nextCursor: z.string().nullable() });
}

/** The task resource (documented as the definition plus the resource fields). */
export const taskResourceSchema = z.object({
  ...taskDefinitionSchema.shape,
  version: z.int(),
  createdAt: z.string(),
  updatedAt: z.string(),
  nextFireTime: z.string().nullable(),
  lastFireTime: z.string().nullable(),
  skippedCount: z.int().describe('extension: slots dropped by the misfire policy'),
  coalescedCount: z.int().describe('extension: slots folded into a waiting instance'),
  calendarSkippedCount: z.int().describe("extension: fires not created because the task's calendar listed their date"),
  pausedReason: z.enum(['FAILURES']).nullable().describe('"FAILURES" while the task is disabled by pauseAfterFailures (cleared by enabling it); null otherwise'),
  managedBy: z
    .string()
    .nullable()
    .describe('extension: the marker of the import that manages the task (`axctl apply --source`, default "axctl"); null when none does. An edit elsewhere may be undone by its next apply'),
});

/** The task body of PUT: the definition plus the current `version`. */
export const taskReplaceSchema = z.object({ ...taskDefinitionSchema.shape, version: z.int().min(1) });

/** The instance resource. */
/** Why a due instance waits (ADMIN-API.md "Waiting instances"). */
export const waitingSchema = z.object({
  reason: z.enum(WAITING_REASONS),
  since: z.string().describe('since when it waits for this reason (its due time for its first reason)'),
  message: z.string().describe('one sentence naming the concrete cause: the running instance of a serial task, the tags no worker offers, the team limit n/m, …'),
});

export const instanceSchema = z.object({
  id: z.string(),
  taskName: z.string(),
  expectedTime: z.string(),
  bizDate: z.string(),
  trigger: z.string(),
  runNo: z.int(),
  state: z.enum(INSTANCE_STATES),
  reason: z.string().nullable(),
  attempt: z.int(),
  maxAttempts: z.int(),
  priority: z.int(),
  params: z.record(z.string(), z.unknown()),
  workerId: z.string().nullable(),
  currentExecutionId: z.string().nullable(),
  createdAt: z.string(),
  startedAt: z.string().nullable().describe('when its current execution started running (reported by the worker, else its ACK); null before'),
  endedAt: z.string().nullable().describe("when it became final: its current execution's end, or (canceled before running) the cancel"),
  durationMs: z.number().nullable().describe("extension: its current execution's run, started → ended, ms; null until it ended"),
  rerunBatchId: z.string().nullable().describe('extension: the rerun or backfill batch that last re-ran or created it'),
  traceId: z
    .string()
    .nullable()
    .describe('extension: the OpenTelemetry trace id of the run (32 hex digits; every log line of the run carries it as `traceId`, and its spans are exported under it when tracing is on, docs/observability.md); null for a manual run or rerun until its first dispatch'),
  taskVersion: z.int().nullable().describe('extension: the task version (GET /tasks/{name}/versions/{v}) of the definition its latest dispatch sent (what its worker ran; before a dispatch, the one it was created or re-run from); null for instances older than that record'),
  team: z.string().nullable().describe("the team of the instance's task (null once the task is deleted: only tokens of every team see it then)"),
  waiting: waitingSchema
    .nullable()
    .describe("why a due instance that is not dispatched waits (WAITING or PENDING; set by the brokers' backlog scan every few seconds); null when it is not held"),
});

/** An event. */
export const eventSchema = z.object({
  type: z.string(),
  at: z.string(),
  executionId: z.string().optional(),
  workerId: z.string().optional(),
  message: z.string().optional(),
  data: z.record(z.string(), z.unknown()).optional(),
});

/** One execution (attempt) in instance detail (ADMIN-API.md: `startedAt`, `endedAt`, `durationMs`, `logSize`). */
export const executionSchema = z.object({
  executionId: z.string(),
  attempt: z.int(),
  runNo: z.int(),
  shardIndex: z.int().nullable(),
  shardTotal: z.int().nullable(),
  workerId: z.string(),
  state: z.string(),
  reason: z.string().nullable(),
  dispatchedAt: z.string(),
  ackedAt: z.string().nullable(),
  startedAt: z.string().nullable().describe('when it started running (reported by the worker, else its ACK)'),
  endedAt: z.string().nullable(),
  durationMs: z.number().nullable().describe('started → ended, ms; null until it ended'),
  exitCode: z.int().nullable(),
  outputTail: z.string().nullable(),
  outputTruncated: z.boolean(),
  error: z.string().nullable(),
  result: z.unknown(),
  logSize: z.int().describe('bytes of output stored (both streams)'),
});

/** `dispatch` (broker → worker queue `<ns>.worker.<id>`): instances for one worker to run (§4, R10). */
import { z } from 'zod';
import { DEFAULT_TEAM, teamNameSchema } from '../task/definition.js';
import { execSchema } from '../task/exec-schema.js';
import { batchOf, bizDateSchema, envelopeShape, idSchema, instantSchema } from './envelope.js';

/**
 * One instance to run. `exec` is the task's executor as defined: templates NOT yet expanded
 * (the worker expands them with `expandExecTemplates`) and secrets as `secretRef`s (resolved on
 * the worker).
 */
export const dispatchItemSchema = z
  .object({
    /** This attempt's execution (UUIDv7); results are fenced by it. */
    executionId: idSchema,
    instanceId: idSchema,
    taskName: z.string().min(1),
    taskId: idSchema,
    /**
     * The task's team: the worker resolves `secretRef`s from that team's folder only and signs
     * HTTP calls with that team's executor key (ADMIN-API.md "Teams", "Secrets"). Items of a
     * broker from before teams carry none: they are `default`'s.
     */
    team: teamNameSchema.default(DEFAULT_TEAM),
    /** The team's current executor key version. */
    keyVersion: z.int().min(1).default(1),
    /**
     * The team's `httpAllow` (ADMIN-API.md "Teams"), from the team row, never from the task:
     * the worker calls only hosts both this and its `AX_HTTP_EXECUTOR_ALLOW` admit. Absent =
     * the team does not narrow the global list (and items of a broker from before #44).
     */
    httpAllow: z.array(z.string().min(1).max(300)).max(1_000).optional(),
    /** While a key rotation's grace lasts: calls carry a signature with the previous key too. */
    previousKeyValidUntil: instantSchema.optional(),
    /** The slot's expected time. */
    expectedTime: instantSchema,
    bizDate: bizDateSchema,
    /** 1-based attempt number of this run. */
    attempt: z.int().min(1),
    maxAttempts: z.int().min(1),
    /** 1 for the first run of the slot, +1 per rerun (R18). */
    runNo: z.int().min(1),
    priority: z.int().min(0).max(9),
    params: z.record(z.string(), z.unknown()),
    exec: execSchema,
    timeoutSeconds: z.int().min(1),
    /** The worker ACKs only while its clock says `now ≤ ackDeadline − 1 s`, else refuses EXPIRED (R8). */
    ackDeadline: instantSchema,
    /** The run's trace id (#48: the OpenTelemetry trace id; the execution id from a broker before it): logs carry it. */
    traceId: z.string().min(1),
    /**
     * W3C `traceparent` of the broker's dispatch span (#48): the worker's execution span is its
     * child, and an HTTP executor receives the trace in its `traceparent` header. Absent from a
     * broker before #48; a value that does not parse starts a new trace (the W3C rule).
     */
    traceparent: z.string().min(1).max(512).optional(),
    /** Broadcast shard (R21). */
    shardIndex: z.int().min(0).optional(),
    shardTotal: z.int().min(1).optional(),
    /** `<taskName>:<expectedTime>:<runNo>` (R18), sent as the HTTP `Idempotency-Key`. */
    idempotencyKey: z.string().min(1),
    /**
     * The broker stores output carried by the result (`output` of a result item, DESIGN §11):
     * the worker may send a short attempt's output there instead of `log` messages. Absent from
     * a broker that does not know the field, which would drop it.
     */
    outputInResult: z.boolean().optional(),
  })
  .superRefine((item, ctx) => {
    if ((item.shardIndex === undefined) !== (item.shardTotal === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['shardIndex'], message: 'shardIndex and shardTotal go together' });
    } else if (item.shardIndex !== undefined && item.shardTotal !== undefined && item.shardIndex >= item.shardTotal) {
      ctx.addIssue({ code: 'custom', path: ['shardIndex'], message: `must be below shardTotal ${item.shardTotal}, got ${item.shardIndex}` });
    }
  });

/** A dispatch message: one or more instances for `workerId`. */
export const dispatchMessageSchema = z.object({
  ...envelopeShape,
  kind: z.literal('dispatch'),
  workerId: idSchema,
  items: batchOf(dispatchItemSchema),
});

/** One instance of a dispatch. */
export type DispatchItem = z.output<typeof dispatchItemSchema>;
/** A dispatch message. */
export type DispatchMessage = z.output<typeof dispatchMessageSchema>;

/** The HTTP `Idempotency-Key` of a run of a slot (R18): equal across retries, new per rerun. */
export function idempotencyKeyOf(taskName: string, expectedTime: string, runNo: number): string {
  return `${taskName}:${expectedTime}:${runNo}`;
}

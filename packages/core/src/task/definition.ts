/**
 * The task definition (ADMIN-API.md "Task definition"): the request body of create/replace and
 * each document of a YAML import. Only `name`, `schedule` and `exec` are required; everything
 * else has the default the contract lists. Unknown top-level fields are refused so that typos
 * (`shedule`) are caught instead of silently ignored.
 */
import { z } from 'zod';
import { ValidationError, type Issue } from '../errors.js';
import { EXEC_FIELDS, execSchema } from './exec-schema.js';
import { convertZodIssue, describeValue, issueAt, type PathSegments } from './issues.js';
import { MAX_JITTER_SECONDS } from '../schedule/jitter.js';
import { DEFAULT_RETRY } from '../retry/defaults.js';
import { structureProblems } from './json-guard.js';
import { jsonSizeExcess } from './json-size.js';
import { misnamedTaskField } from './misnamed-fields.js';
import { SCHEDULE_FIELDS, scheduleSchema } from './schedule-schema.js';

/** `^[a-z0-9][a-z0-9_.-]{0,127}$`: lower case, digits, `_ . -`, at most 128 characters. */
export const TASK_NAME_PATTERN = /^[a-z0-9][a-z0-9_.-]{0,127}$/;

/** `^[a-z][a-z0-9_-]{0,63}$`: a team name (ADMIN-API.md "Teams"). */
export const TEAM_NAME_PATTERN = /^[a-z][a-z0-9_-]{0,63}$/;

/** The team of a task that names none; it always exists. */
export const DEFAULT_TEAM = 'default';

/** A team name. */
export const teamNameSchema = z.string().regex(TEAM_NAME_PATTERN, {
  error: (iss) => `must match ^[a-z][a-z0-9_-]{0,63}$ (a lower case letter, then letters, digits, _ -; at most 64 characters), got ${describeValue(iss.input)}`,
});

/** Worker tags: no commas or spaces (workers list them in `AX_WORKER_TAGS`, comma separated). */
export const TAG_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:=/-]{0,63}$/;

/** `catch_up.max` when a `catch_up` misfire policy names no cap. */
export const DEFAULT_CATCH_UP_MAX = 10;

/**
 * The marker an import stores on the tasks it writes (`axctl apply --source`, the import's
 * `managedBy`; #47): prune deletes only tasks carrying its own. Fits `task.managed_by`.
 */
export const MANAGED_BY_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:/@-]{0,127}$/;

/** The marker `axctl apply` uses without `--source`. */
export const DEFAULT_MANAGED_BY = 'axctl';

/** How long a `WAITING` instance waits for its upstream before `UPSTREAM_MISSING` (DESIGN R19). */
export const DEFAULT_DEPENDENCY_TIMEOUT_SECONDS = 86_400;

/**
 * Largest `timeoutSeconds`: the longest delay a Node.js timer can hold (2^31−1 ms ≈ 24.8 days);
 * beyond it `setTimeout` would fire at once.
 */
export const MAX_TIMEOUT_SECONDS = 2_147_483;

/** Largest `retry.max` (automatic retries of one run). */
export const MAX_RETRIES = 100;

/** Largest `catch_up.max` (missed slots created at once). */
export const MAX_CATCH_UP = 1_000;

const nameSchema = z.string().regex(TASK_NAME_PATTERN, {
  error: (iss) =>
    `must match ^[a-z0-9][a-z0-9_.-]{0,127}$ (lower case letters, digits, _ . -; at most 128 characters), got ${describeValue(iss.input)}`,
});

const tagSchema = z.string().regex(TAG_PATTERN, {
  error: (iss) => `must be a tag of letters, digits and _ . : = / - (at most 64 characters), got ${describeValue(iss.input)}`,
});

/** `retry`: a partial object takes its missing fields from `DEFAULT_RETRY`. */
export const retrySchema = z
  .strictObject({
    /** Automatic retries after the first attempt (so `maxAttempts = max + 1`). */
    max: z.int().min(0).max(MAX_RETRIES).default(DEFAULT_RETRY.max),
    /** Delay before the first retry, seconds. */
    backoffSeconds: z.number().min(0).max(86_400).default(DEFAULT_RETRY.backoffSeconds),
    /** Each further retry waits `factor` times longer. */
    factor: z.number().min(1).max(100).default(DEFAULT_RETRY.factor),
    /** Up to this many random seconds are added to each delay. */
    jitterSeconds: z.number().min(0).max(86_400).default(DEFAULT_RETRY.jitterSeconds),
  })
  .default(() => ({ ...DEFAULT_RETRY }));

const misfireVariants = [
  z.strictObject({ policy: z.literal('skip') }),
  z.strictObject({ policy: z.literal('fire_once') }),
  z.strictObject({ policy: z.literal('catch_up'), max: z.int().min(1).max(MAX_CATCH_UP).default(DEFAULT_CATCH_UP_MAX) }),
] as const;

/** `misfire`: `skip` | `fire_once` (default) | `catch_up` with `max` (default 10). */
export const misfireSchema = z.discriminatedUnion('policy', misfireVariants).default(() => ({ policy: 'fire_once' as const }));

/** Largest `pauseAfterFailures`. */
export const MAX_PAUSE_AFTER_FAILURES = 1_000;

/** Largest `sla.startWithinSeconds` / `sla.finishWithinSeconds` (a year). */
export const MAX_SLA_SECONDS = 366 * 86_400;

const slaSecondsSchema = z.int().min(1).max(MAX_SLA_SECONDS);

/**
 * `sla`: `SLA_MISSED` (warning, once per instance) when an instance has not started /
 * not finished that many seconds after its `expectedTime`. At least one of the two; null = none.
 */
export const slaSchema = z
  .strictObject({
    /** Seconds after `expectedTime` by which the instance must be RUNNING (or final). */
    startWithinSeconds: slaSecondsSchema.optional(),
    /** Seconds after `expectedTime` by which the instance must be final. */
    finishWithinSeconds: slaSecondsSchema.optional(),
  })
  .refine((sla) => sla.startWithinSeconds !== undefined || sla.finishWithinSeconds !== undefined, {
    error: 'must name startWithinSeconds, finishWithinSeconds or both (or be null for no SLA)',
  })
  .nullable()
  .default(null);

/** What happens when a slot comes due while an earlier instance still runs (DESIGN R4). */
export const BLOCK_STRATEGIES = ['parallel', 'serial', 'discard', 'cover'] as const;

/** Largest N of `block: {"queue": N}`. */
export const MAX_BLOCK_QUEUE = 1_000;

/**
 * `block`: one of {@link BLOCK_STRATEGIES}, or `{"queue": N}` (Temporal's BufferAll): every
 * fire is kept, at most N waiting, run one after another in slot order; beyond N further fires
 * are coalesced and counted, as with `serial`.
 */
export const blockSchema = z
  .union([z.enum(BLOCK_STRATEGIES), z.strictObject({ queue: z.int().min(1).max(MAX_BLOCK_QUEUE) })], {
    error: (iss) =>
      `must be one of "parallel", "serial", "discard", "cover" or {"queue":N} (N 1..${MAX_BLOCK_QUEUE}), got ${describeValue(iss.input)}`,
  })
  .default('serial');
/** The rule of a dependency edge: the child runs when every parent SUCCEEDED / is final. */
export const DEPENDENCY_RULES = ['ALL_SUCCESS', 'ALL_DONE'] as const;

/** Most parents one task may name in `dependsOn`. */
export const MAX_DEPENDS_ON = 100;

/**
 * `dependsOn` (ADMIN-API.md "Task definition"): the task's parents, `[{"task","rule"?}]` (rule
 * default `ALL_SUCCESS`). Its incoming edges are created, changed and removed with the task.
 * Absent = the task's edges are left as they are; `[]` = it has no parents.
 */
export const dependsOnSchema = z
  .array(
    z.strictObject({
      /** The parent task's name. */
      task: nameSchema,
      /** `ALL_SUCCESS` (default) or `ALL_DONE`. */
      rule: z.enum(DEPENDENCY_RULES).default('ALL_SUCCESS'),
    }),
  )
  .max(MAX_DEPENDS_ON)
  .optional();

/** How the broker picks workers (DESIGN §4, R21). */
export const ROUTE_STRATEGIES = ['load', 'round_robin', 'consistent_hash', 'broadcast'] as const;

/** Headers a task may not send although ax does not set them itself (lower case; #44). */
export const FORBIDDEN_TASK_HEADERS: readonly string[] = ['host'];

/** The task definition schema (input → output with defaults filled). */
export const taskDefinitionSchema = z.strictObject({
  name: nameSchema,
  // Lengths match the `task` table's columns (VARCHAR(2048), VARCHAR(128)), so a valid
  // definition always fits its row.
  description: z.string().max(2_048).default(''),
  /** The owning team (must exist); default `default`. */
  team: teamNameSchema.default(DEFAULT_TEAM),
  owner: z.string().max(128).default(''),
  schedule: scheduleSchema,
  exec: execSchema,
  params: z.record(z.string(), z.unknown()).default(() => ({})),
  tags: z
    .array(tagSchema)
    .max(32)
    .default(() => [])
    .transform((tags) => [...new Set(tags)]),
  priority: z.int().min(0).max(9).default(5),
  timeoutSeconds: z.int().min(1).max(MAX_TIMEOUT_SECONDS).default(3_600),
  retry: retrySchema,
  misfire: misfireSchema,
  block: blockSchema,
  maxLatenessSeconds: z.int().min(1).nullable().default(null),
  route: z.enum(ROUTE_STRATEGIES).default('load'),
  bizDateOffsetDays: z.int().min(-366).max(366).default(0),
  /** Name of a calendar of the task's team: fires on its dates are skipped (counted). Default null. */
  calendar: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_.-]{0,63}$/, {
      error: (iss) => `must be a calendar name matching ^[a-z0-9][a-z0-9_.-]{0,63}$, got ${describeValue(iss.input)}`,
    })
    .nullable()
    .default(null),
  /** Each scheduled slot starts up to this many seconds after its time, by an offset stable per slot. Default 0. */
  jitterSeconds: z.int().min(0).max(MAX_JITTER_SECONDS).default(0),
  /** After this many consecutive FAILED runs the task disables itself (`pausedReason: "FAILURES"`). Default null = never. */
  pauseAfterFailures: z.int().min(1).max(MAX_PAUSE_AFTER_FAILURES).nullable().default(null),
  /** Start-within / finish-within limits after `expectedTime`; a miss raises `SLA_MISSED`. Default null. */
  sla: slaSchema,
  enabled: z.boolean().default(true),
  /**
   * Extension (DESIGN R19): seconds a `WAITING` instance waits for its upstream. Default null:
   * the scheduler's `AX_DEPENDENCY_TIMEOUT_S` (itself {@link DEFAULT_DEPENDENCY_TIMEOUT_SECONDS}
   * by default) — absence is stored, so the setting applies to every task that sets none (#47).
   */
  dependencyTimeoutSeconds: z.int().min(1).max(366 * 86_400).nullable().default(null),
  /** The task's parents; absent leaves its edges as they are (see {@link dependsOnSchema}). */
  dependsOn: dependsOnSchema,
}).superRefine((def, ctx) => {
  // #44: with its own `Host` a task of one team would reach any virtual host behind an address
  // another team's allowlist admits. Refused at save (create, PUT, import), any spelling; the
  // worker never sends one either (tasks stored before this check).
  if (def.exec.type !== 'http' || def.exec.headers === undefined) return;
  for (const name of Object.keys(def.exec.headers)) {
    if (!FORBIDDEN_TASK_HEADERS.includes(name.toLowerCase())) continue;
    ctx.addIssue({
      code: 'custom',
      path: ['exec', 'headers', name],
      message: `header ${JSON.stringify(name)} cannot be set by a task: the request goes to the host of exec.url, named by that URL`,
      input: name,
    });
  }
});


/** A task definition with every default applied (what the services work with). */
export type TaskDefinition = z.output<typeof taskDefinitionSchema>;
/** A task definition as written by people and tools (only `name`, `schedule`, `exec` required). */
export type TaskDefinitionInput = z.input<typeof taskDefinitionSchema>;
/** `retry` after defaults. */
export type RetryPolicy = TaskDefinition['retry'];
/** `misfire` after defaults. */
export type MisfirePolicy = TaskDefinition['misfire'];
/** `block` strategy: a named one or `{queue: N}`. */
export type BlockStrategy = TaskDefinition['block'];

/**
 * How many instances of a task may wait (WAITING, PENDING, RETRY_WAIT) before a new fire is
 * coalesced (R4 at slot creation): 1 for `serial`, N for `{queue: N}`, null when unlimited.
 */
export function maxWaitingOf(block: BlockStrategy): number | null {
  if (typeof block === 'object') return block.queue;
  return block === 'serial' ? 1 : null;
}

/** True for `{queue: N}`: its instances run one after another in slot order. */
export function isQueueBlock(block: BlockStrategy): block is { queue: number } {
  return typeof block === 'object';
}
/** `route` strategy. */
export type RouteStrategy = (typeof ROUTE_STRATEGIES)[number];
/** One parent of `dependsOn`, after defaults. */
export type DependsOnEntry = NonNullable<TaskDefinition['dependsOn']>[number];
/** The rule of an edge. */
export type DependencyRule = (typeof DEPENDENCY_RULES)[number];
/** `sla` after defaults (null = none). */
export type TaskSla = TaskDefinition['sla'];

/** Every field a task definition may carry. */
export const TASK_DEFINITION_FIELDS: readonly string[] = Object.keys(taskDefinitionSchema.shape);

/**
 * Fields of the task *resource* (responses) that are not part of the definition. A client that
 * GETs a task, edits it and PUTs it back sends them; `allowResourceFields` drops them.
 */
export const TASK_RESOURCE_FIELDS: readonly string[] = ['version', 'createdAt', 'updatedAt', 'nextFireTime', 'lastFireTime'];

/** Options of `parseTaskDefinition`. */
export interface ParseTaskOptions {
  /**
   * Drop the read-only resource fields (`TASK_RESOURCE_FIELDS`, e.g. `version`) instead of
   * refusing them as unknown. Default false. The caller reads `version` itself when it needs it.
   */
  allowResourceFields?: boolean;
}

/** The result of a parse: the value, or every issue found. */
export type ValidationResult<T> = { ok: true; value: T } | { ok: false; issues: Issue[] };

function knownFieldsAt(input: unknown): (path: PathSegments) => readonly string[] {
  const pick = (value: unknown, key: string): unknown =>
    value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
  return (path) => {
    if (path.length === 0) return TASK_DEFINITION_FIELDS;
    if (path.length === 2 && path[0] === 'dependsOn') return ['task', 'rule'];
    if (path.length !== 1) return [];
    const section = pick(input, String(path[0]));
    const type = String(pick(section, 'type'));
    switch (path[0]) {
      case 'schedule':
        return SCHEDULE_FIELDS[type] ?? [];
      case 'exec':
        return EXEC_FIELDS[type] ?? [];
      case 'retry':
        return Object.keys(DEFAULT_RETRY);
      case 'misfire':
        return ['policy', 'max'];
      case 'sla':
        return ['startWithinSeconds', 'finishWithinSeconds'];
      default:
        return [];
    }
  };
}

/** Rules between fields, checked once every field is valid on its own. */
function crossFieldIssues(def: TaskDefinition): Issue[] {
  const issues: Issue[] = [];
  // R5 counts lateness from the slot time, and the jitter offset is part of it: a slot could
  // otherwise be canceled TOO_LATE only because of the offset ax chose for it.
  if (def.maxLatenessSeconds !== null && def.jitterSeconds >= def.maxLatenessSeconds) {
    issues.push(
      issueAt(['jitterSeconds'], `must be less than maxLatenessSeconds (${def.maxLatenessSeconds}), got ${def.jitterSeconds}: lateness counts from the slot time, offset included`),
    );
  }
  (def.dependsOn ?? []).forEach((parent, index) => {
    const at = ['dependsOn', index, 'task'];
    if (parent.task === def.name) {
      issues.push(issueAt(at, `a task cannot depend on itself, got ${describeValue(parent.task)}`));
      return;
    }
    const first = def.dependsOn?.findIndex((p) => p.task === parent.task) ?? index;
    if (first !== index) issues.push(issueAt(at, `${describeValue(parent.task)} is listed already (dependsOn[${first}]); name each parent once`));
  });
  return issues;
}

/**
 * Validates a task definition and applies its defaults. Never throws.
 *
 * Issues name the field and the value, e.g.
 * `{path: 'schedule.timezone', message: 'schedule.timezone: unknown time zone "Mars/Olympus"'}`.
 */
export function parseTaskDefinition(input: unknown, options: ParseTaskOptions = {}): ValidationResult<TaskDefinition> {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    return { ok: false, issues: [issueAt([], `a task definition must be an object, got ${describeValue(input)}`)] };
  }
  // Sizes before anything walks the whole input (#45): a YAML import's document, like a JSON
  // body, may hold 300,000 items in one list, and zod spent ~18 s on them.
  const tooLarge = jsonSizeExcess(input);
  if (tooLarge !== undefined) return { ok: false, issues: [issueAt(tooLarge.path, tooLarge.detail)] };
  const structural = structureProblems(input);
  if (structural.length > 0) {
    return { ok: false, issues: structural.map((p) => issueAt(p.path, p.detail)) };
  }
  let candidate = input as Record<string, unknown>;
  if (options.allowResourceFields === true) {
    candidate = Object.fromEntries(Object.entries(candidate).filter(([key]) => !TASK_RESOURCE_FIELDS.includes(key)));
  }
  const parsed = taskDefinitionSchema.safeParse(candidate, { reportInput: true });
  if (parsed.success) {
    const crossed = crossFieldIssues(parsed.data);
    return crossed.length === 0 ? { ok: true, value: parsed.data } : { ok: false, issues: crossed };
  }
  const known = knownFieldsAt(candidate);
  return { ok: false, issues: parsed.error.issues.flatMap((issue) => convertZodIssue(issue, known, misnamedTaskField)) };
}

/**
 * Like `parseTaskDefinition`, for callers that prefer an exception.
 *
 * @throws ValidationError carrying every issue.
 */
export function parseTaskDefinitionOrThrow(input: unknown, options: ParseTaskOptions = {}): TaskDefinition {
  const result = parseTaskDefinition(input, options);
  if (!result.ok) throw new ValidationError(result.issues, 'task definition');
  return result.value;
}

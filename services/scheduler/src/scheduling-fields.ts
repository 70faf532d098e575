/**
 * What the scheduler keeps of a task definition (#24): the fields it schedules by, not the
 * executor, parameters, tags, description, owner, route, priority, timeouts or SLAs (the
 * broker's and admin-api's). With 100,000 tasks the whole parsed definitions were most of the
 * scheduler's live heap (155 MB in a heap snapshot: 9 objects and 10 strings a task, the same
 * URL, zone and team copied 100,000 times), and V8 lets a heap grow to about three times what
 * survives its full collections before the next one: RSS 650-820 MB.
 *
 * The values many tasks share (a zone, a team, a cron schedule, a misfire or block policy) are
 * interned: equal values are one frozen object or string. The table is bounded: past
 * {@link INTERNED_MAX} entries it starts over, which only costs sharing, never correctness.
 */
import type { TaskDefinition } from '@ax/core';

/** The fields of a definition the scheduler reads. */
export interface SchedulingFields {
  readonly name: string;
  readonly team: string;
  readonly enabled: boolean;
  readonly schedule: TaskDefinition['schedule'];
  readonly misfire: TaskDefinition['misfire'];
  readonly block: TaskDefinition['block'];
  /** Only the attempt budget: the broker applies the rest of the retry policy. */
  readonly retry: { readonly max: number };
  readonly jitterSeconds: number;
  readonly bizDateOffsetDays: number;
  /** null: the task sets none, `AX_DEPENDENCY_TIMEOUT_S` applies (#47). */
  readonly dependencyTimeoutSeconds: number | null;
  readonly calendar: string | null;
}

/** Most interned values kept; past it the table starts over. */
export const INTERNED_MAX = 20_000;

const interned = new Map<string, unknown>();

/** How many values are interned now (for tests of the bound). */
export function internedCount(): number {
  return interned.size;
}

function remember<T>(key: string, value: T): T {
  const hit = interned.get(key);
  if (hit !== undefined) return hit as T;
  if (interned.size >= INTERNED_MAX) interned.clear();
  interned.set(key, value);
  return value;
}

/** The one kept string equal to `s`. */
function internString(s: string): string {
  return remember(`s${s}`, s);
}

/**
 * The one kept frozen copy of a plain JSON value equal to `value` (its own strings interned).
 * Parsed definitions are JSON values, for which `JSON.stringify` is an exact key (an absent and
 * an undefined property are one, as they are to every reader).
 */
function internValue<T>(value: T): T {
  if (typeof value === 'string') return internString(value) as T;
  if (value === null || typeof value !== 'object') return value;
  const key = `j${JSON.stringify(value)}`;
  const hit = interned.get(key);
  if (hit !== undefined) return hit as T;
  const copy = Array.isArray(value)
    ? value.map((v: unknown) => internValue(v))
    : Object.fromEntries(Object.entries(value).map(([k, v]) => [k, internValue(v)]));
  return remember(key, Object.freeze(copy) as T);
}

/** The scheduler's part of `def`, sharing what equal definitions share. */
export function schedulingFieldsOf(def: TaskDefinition): SchedulingFields {
  return Object.freeze({
    name: def.name,
    team: internString(def.team),
    enabled: def.enabled,
    schedule: internValue(def.schedule),
    misfire: internValue(def.misfire),
    block: internValue(def.block),
    retry: internValue({ max: def.retry.max }),
    jitterSeconds: def.jitterSeconds,
    bizDateOffsetDays: def.bizDateOffsetDays,
    dependencyTimeoutSeconds: def.dependencyTimeoutSeconds,
    calendar: def.calendar === null ? null : internString(def.calendar),
  });
}

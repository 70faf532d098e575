/**
 * Trusted reads of stored task definitions (#46): a definition was validated through
 * {@link taskDefinitionSchema} when it was written (create, replace, import), and the store
 * writes what that parse returned, every default filled. Reading it back for a list, a search or
 * the DAG grid does not need zod again (22 % of admin-api's CPU in a task search on the history
 * bench, where each page shows other tasks and the parse memo misses).
 *
 * What a trusted read still checks is the shape, cheaply: a row written by an older build (R22
 * rolling upgrades) may lack a field a later build added with a default, and only the full parse
 * fills it. So {@link trustedTaskDefinition} returns the stored value as it is only when every
 * field that has a default in *today's* schema is present at every level (the lists of such
 * fields are taken from the zod schemas themselves, one source); otherwise it returns undefined
 * and the caller parses the row in full, which gives today's defaults, or fails naming the field.
 * Values are not re-checked: a row is trusted to hold what a parse wrote.
 */
import type { z } from 'zod';
import { retrySchema, misfireSchema, type TaskDefinition } from './definition.js';
import { execSchema } from './exec-schema.js';
import { scheduleSchema } from './schedule-schema.js';

type AnySchema = z.ZodType;
type Shape = Record<string, AnySchema>;

/** The zod definition of a schema (zod 4 keeps it on `_zod.def`). */
const defOf = (schema: AnySchema): { type: string; innerType?: AnySchema; options?: AnySchema[]; shape?: Shape } =>
  (schema as unknown as { _zod: { def: { type: string; innerType?: AnySchema; options?: AnySchema[]; shape?: Shape } } })._zod.def;

/** The schema inside `.default()` / `.optional()` wrappers. */
function unwrap(schema: AnySchema): AnySchema {
  let s = schema;
  for (let def = defOf(s); (def.type === 'default' || def.type === 'optional' || def.type === 'prefault') && def.innerType !== undefined; def = defOf(s)) {
    s = def.innerType;
  }
  return s;
}

/** The keys of an object schema whose value has a default: a parse always outputs them. */
function defaultedKeys(objectSchema: AnySchema): string[] {
  const shape = defOf(unwrap(objectSchema)).shape ?? {};
  return Object.entries(shape)
    .filter(([, value]) => defOf(value).type === 'default')
    .map(([key]) => key);
}

/**
 * For a discriminated union (schedule, exec, misfire): the keys with a default of each variant, by
 * the variant's discriminator value.
 */
function defaultedKeysByVariant(union: AnySchema, discriminator: string): ReadonlyMap<string, readonly string[]> {
  const out = new Map<string, readonly string[]>();
  for (const option of defOf(unwrap(union)).options ?? []) {
    const literal = defOf(defOf(option).shape?.[discriminator] as AnySchema) as unknown as { values?: unknown[] };
    for (const value of literal.values ?? []) out.set(String(value), defaultedKeys(option));
  }
  return out;
}

const SCHEDULE_DEFAULTED = defaultedKeysByVariant(scheduleSchema, 'type');
const EXEC_DEFAULTED = defaultedKeysByVariant(execSchema, 'type');
const MISFIRE_DEFAULTED = defaultedKeysByVariant(misfireSchema, 'policy');
const RETRY_DEFAULTED = defaultedKeys(retrySchema);

const isPlainObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** Whether `value` is an object of a known variant carrying every key that has a default. */
function complete(value: unknown, variants: ReadonlyMap<string, readonly string[]>, discriminator: string): boolean {
  if (!isPlainObject(value)) return false;
  const keys = variants.get(String(value[discriminator]));
  return keys !== undefined && keys.every((key) => key in value);
}

/**
 * `candidate` (a definition assembled from a stored row: its columns and its decoded JSON columns)
 * as a {@link TaskDefinition} when its shape is today's complete one; undefined when it is not
 * (a field an older build did not write, an unknown variant, a JSON column that is not an
 * object): then the caller runs the full parse. Top-level fields are the store's own columns
 * (each with its column default); the nested objects are checked here.
 */
export function trustedTaskDefinition(candidate: Record<string, unknown>): TaskDefinition | undefined {
  if (!complete(candidate['schedule'], SCHEDULE_DEFAULTED, 'type')) return undefined;
  if (!complete(candidate['exec'], EXEC_DEFAULTED, 'type')) return undefined;
  if (!complete(candidate['misfire'], MISFIRE_DEFAULTED, 'policy')) return undefined;
  const retry = candidate['retry'];
  if (!isPlainObject(retry) || !RETRY_DEFAULTED.every((key) => key in retry)) return undefined;
  if (!isPlainObject(candidate['params']) || !Array.isArray(candidate['tags'])) return undefined;
  return candidate as unknown as TaskDefinition;
}

/** The keys a complete stored shape carries at each level (for tests and docs). */
export const STORED_DEFINITION_DEFAULTED_KEYS = {
  schedule: SCHEDULE_DEFAULTED,
  exec: EXEC_DEFAULTED,
  misfire: MISFIRE_DEFAULTED,
  retry: RETRY_DEFAULTED,
} as const;

/**
 * Leaf checks of the fast accept path (`fast-accept.ts`): each answers "would zod certainly
 * accept this value for that field?" and may say no to a value zod accepts (the caller then
 * falls back to zod), never the reverse. They mirror the schemas in `envelope.ts`,
 * `dispatch.ts`, `worker-replies.ts` and `exec-schema.ts`; change both together (the tests in
 * `fast-accept.test.ts` compare the mirrored facts with the schemas).
 */
import { z } from 'zod';
import { ID_MAX_LENGTH } from './envelope.js';

/** zod's own pattern for `instantSchema` (`z.iso.datetime({ offset: true })`). */
export const INSTANT_PATTERN = z.regexes.datetime({ offset: true, local: false, precision: null });
/** zod's own pattern for `bizDateSchema` (`z.iso.date()`). */
export const BIZ_DATE_PATTERN = z.regexes.date;

/**
 * A JSON object (not null, not an array). zod's record check (`isPlainObject`) also looks at
 * `constructor`, which only a non-JSON value (a function) could fail.
 */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `z.int()` with bounds: a finite number, integral and within the safe-integer range. */
export function isIntIn(value: unknown, min: number, max: number = Number.MAX_SAFE_INTEGER): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= min && value <= max;
}

/** `z.string().min(1)`: one UTF-16 unit is always one code point, so `length` decides. */
export function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}

/**
 * `z.string().max(max)` with an optional floor. zod counts code points; a string within `max`
 * UTF-16 units is within `max` code points, and a longer one is left to zod to count.
 */
export function isStringUpTo(value: unknown, max: number, min = 0): value is string {
  return typeof value === 'string' && value.length <= max && value.length >= min;
}

/** `idSchema`. */
export function isId(value: unknown): value is string {
  return isStringUpTo(value, ID_MAX_LENGTH, 1);
}

/** `instantSchema`. */
export function isInstant(value: unknown): value is string {
  return typeof value === 'string' && INSTANT_PATTERN.test(value);
}

/** `bizDateSchema`. */
export function isBizDate(value: unknown): value is string {
  return typeof value === 'string' && BIZ_DATE_PATTERN.test(value);
}

/** `z.enum(values)` / `z.literal` of strings. */
export function isOneOf<T extends string>(values: readonly T[], value: unknown): value is T {
  return (values as readonly unknown[]).includes(value);
}

/** `z.boolean().optional()`: absent or a boolean. */
export function isOptionalBoolean(value: unknown): value is boolean | undefined {
  return value === undefined || typeof value === 'boolean';
}

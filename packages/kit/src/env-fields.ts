/**
 * Builders for environment-variable fields: each field knows its variable's name, how a valid
 * value looks (for the one-line error), whether its value may be printed, and a zod schema that
 * turns the raw string (or `undefined` when unset or empty) into the resolved value.
 *
 * `loadConfig` (config.ts) composes fields into one zod object and parses the environment once.
 */
import path from 'node:path';
import { z } from 'zod';
import { productionSecretProblem } from './production-secrets.js';

/** The environment as read: `process.env` or a plain object in tests. */
export type Env = Readonly<Record<string, string | undefined>>;

/** What a field's schema may depend on besides its own variable. */
export interface EnvContext {
  /** The whole environment (already with empty strings removed). */
  readonly env: Env;
  /** `NODE_ENV === 'production'`: a few defaults that suit a laptop are refused there. */
  readonly production: boolean;
  /** Directory relative paths are resolved against (`process.cwd()`). */
  readonly cwd: string;
}

/**
 * How a value may appear in an error line: `public` verbatim, `url` with its password masked,
 * `secret` never (tokens, keys, webhook URLs that embed a token).
 */
export type Sensitivity = 'public' | 'url' | 'secret';

/** One environment variable and how it is parsed. */
export interface EnvField<T> {
  /** Name of the environment variable, e.g. `AX_ACK_TIMEOUT_MS`. */
  readonly env: string;
  /** What a valid value looks like, as the error line says it: "a positive integer (milliseconds)". */
  readonly expected: string;
  /** Whether the value may be printed. */
  readonly sensitivity: Sensitivity;
  /** Schema from the raw value (`undefined` = unset) to the resolved one. */
  readonly schema: (ctx: EnvContext) => z.ZodType<T, string | undefined>;
}

/** Marker in a zod issue's params: the variable is unset and has no default. */
export const UNSET_PARAM = 'axUnset';

type Parser<T> = (raw: string, ctx: EnvContext) => { ok: true; value: T } | { ok: false; problem?: string };

interface FieldOptions<T> {
  env: string;
  expected: string;
  sensitivity?: Sensitivity;
  /** Value when unset; a function is evaluated at load time (host name, core count). */
  default?: T | ((ctx: EnvContext) => T);
  /** Why the variable is required when unset and there is no default (message tail). */
  requiredReason?: (ctx: EnvContext) => string | undefined;
  /** Shortest value accepted with `NODE_ENV=production` (a secret's; production-secrets.ts). */
  productionMinLength?: number;
  parse: Parser<T>;
}

/**
 * Builds a field. With `NODE_ENV=production` a value that may not be printed (`url`, `secret`)
 * is first checked by `productionSecretProblem`: a placeholder or a weak key is refused before
 * the format is (a short placeholder is reported as a placeholder).
 */
function makeField<T>(opts: FieldOptions<T>): EnvField<T> {
  const { env, expected, parse } = opts;
  const sensitivity = opts.sensitivity ?? 'public';
  return {
    env,
    expected,
    sensitivity,
    schema: (ctx) =>
      z
        .string()
        .optional()
        .transform((raw, zctx): T => {
          if (raw === undefined) {
            const reason = opts.requiredReason?.(ctx);
            if (reason === undefined && 'default' in opts) {
              const d = opts.default;
              return typeof d === 'function' ? (d as (c: EnvContext) => T)(ctx) : (d as T);
            }
            zctx.addIssue({
              code: 'custom',
              message: `${reason ?? 'required'}; expected ${expected}`,
              params: { [UNSET_PARAM]: true },
            });
            return z.NEVER;
          }
          if (ctx.production && sensitivity !== 'public') {
            const problem = productionSecretProblem(raw, {
              kind: sensitivity,
              ...(opts.productionMinLength !== undefined ? { minLength: opts.productionMinLength } : {}),
            });
            if (problem !== undefined) {
              zctx.addIssue({ code: 'custom', message: problem });
              return z.NEVER;
            }
          }
          const result = parse(raw, ctx);
          if (result.ok) return result.value;
          zctx.addIssue({ code: 'custom', message: `expected ${expected}${result.problem ? ` (${result.problem})` : ''}` });
          return z.NEVER;
        }),
  };
}

const UNIT_NAMES = { ms: 'milliseconds', s: 'seconds', bytes: 'bytes', days: 'days', count: '', perSecond: 'per second', percent: 'percent' } as const;
/** Unit of a numeric field, printed in the error line. */
export type Unit = keyof typeof UNIT_NAMES;

function unitSuffix(unit: Unit): string {
  return UNIT_NAMES[unit] === '' ? '' : ` (${UNIT_NAMES[unit]})`;
}

/** An integer variable, e.g. `AX_ACK_TIMEOUT_MS`. Surrounding blanks are ignored. */
export function intField(opts: {
  env: string;
  unit: Unit;
  /** Smallest accepted value; default 1. */
  min?: number;
  /** Largest accepted value; default `Number.MAX_SAFE_INTEGER`. */
  max?: number;
  default?: number | ((ctx: EnvContext) => number);
}): EnvField<number> {
  const min = opts.min ?? 1;
  const max = opts.max ?? Number.MAX_SAFE_INTEGER;
  let kind: string;
  if (max !== Number.MAX_SAFE_INTEGER) kind = `an integer from ${min} to ${max}`;
  else if (min === 1) kind = 'a positive integer';
  else if (min === 0) kind = 'a non-negative integer';
  else kind = `an integer of at least ${min}`;
  return makeField<number>({
    env: opts.env,
    expected: `${kind}${unitSuffix(opts.unit)}`,
    ...(opts.default !== undefined ? { default: opts.default } : {}),
    parse: (raw) => {
      const s = raw.trim();
      if (!/^[+-]?\d+$/.test(s)) return { ok: false };
      const n = Number(s);
      // `+ 0` turns -0 into 0.
      return Number.isSafeInteger(n) && n >= min && n <= max ? { ok: true, value: n + 0 } : { ok: false };
    },
  });
}

/** A positive decimal number, e.g. `AX_DISPATCH_RATE=12.5` or `AX_SHUTDOWN_GRACE_S=0.5`. */
export function positiveNumberField(opts: {
  env: string;
  unit: Unit;
  default?: number;
}): EnvField<number>;
export function positiveNumberField(opts: { env: string; unit: Unit; optional: true }): EnvField<number | undefined>;
export function positiveNumberField(opts: {
  env: string;
  unit: Unit;
  default?: number;
  optional?: true;
}): EnvField<number | undefined> {
  return makeField<number | undefined>({
    env: opts.env,
    expected: `a positive number${unitSuffix(opts.unit)}`,
    ...(opts.optional ? { default: undefined } : opts.default !== undefined ? { default: opts.default } : {}),
    parse: (raw) => {
      const s = raw.trim();
      if (!/^\+?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s)) return { ok: false };
      const n = Number(s);
      return Number.isFinite(n) && n > 0 ? { ok: true, value: n } : { ok: false };
    },
  });
}

/** A string matched against a pattern. */
export function stringField(opts: {
  env: string;
  expected: string;
  pattern?: RegExp;
  minLength?: number;
  maxLength?: number;
  sensitivity?: Sensitivity;
  /** Shortest value accepted with `NODE_ENV=production` (secrets); default: `minLength` only. */
  productionMinLength?: number;
  default?: string | ((ctx: EnvContext) => string);
}): EnvField<string>;
export function stringField(opts: {
  env: string;
  expected: string;
  pattern?: RegExp;
  minLength?: number;
  maxLength?: number;
  sensitivity?: Sensitivity;
  productionMinLength?: number;
  optional: true;
}): EnvField<string | undefined>;
export function stringField(opts: {
  env: string;
  expected: string;
  pattern?: RegExp;
  minLength?: number;
  maxLength?: number;
  sensitivity?: Sensitivity;
  productionMinLength?: number;
  default?: string | ((ctx: EnvContext) => string);
  optional?: true;
}): EnvField<string | undefined> {
  return makeField<string | undefined>({
    env: opts.env,
    expected: opts.expected,
    sensitivity: opts.sensitivity ?? 'public',
    ...(opts.productionMinLength !== undefined ? { productionMinLength: opts.productionMinLength } : {}),
    ...(opts.optional ? { default: undefined } : opts.default !== undefined ? { default: opts.default } : {}),
    parse: (raw) => {
      if (opts.minLength !== undefined && raw.length < opts.minLength) {
        return { ok: false, problem: `${raw.length} characters given` };
      }
      if (opts.maxLength !== undefined && raw.length > opts.maxLength) {
        return { ok: false, problem: `${raw.length} characters given` };
      }
      if (opts.pattern && !opts.pattern.test(raw)) return { ok: false };
      return { ok: true, value: raw };
    },
  });
}

/** One of a fixed set of words (case-insensitive; resolved lower-case). */
export function enumField<const V extends string>(opts: {
  env: string;
  values: readonly V[];
  default: V;
}): EnvField<V> {
  return makeField<V>({
    env: opts.env,
    expected: `one of ${opts.values.join(', ')}`,
    default: opts.default,
    parse: (raw) => {
      const s = raw.trim().toLowerCase();
      const hit = opts.values.find((v) => v === s);
      return hit === undefined ? { ok: false } : { ok: true, value: hit };
    },
  });
}

/**
 * A URL with one of the given protocols, kept as a string (drivers take strings). With
 * `sensitivity: 'url'` (the default) a password in it is masked in error lines.
 */
export function urlField(opts: {
  env: string;
  protocols: readonly string[];
  /** Also require a non-empty path (e.g. the database name of a MySQL URL). */
  requirePath?: string;
  sensitivity?: Sensitivity;
  default?: string;
}): EnvField<string>;
export function urlField(opts: {
  env: string;
  protocols: readonly string[];
  requirePath?: string;
  sensitivity?: Sensitivity;
  optional: true;
}): EnvField<string | undefined>;
export function urlField(opts: {
  env: string;
  protocols: readonly string[];
  requirePath?: string;
  sensitivity?: Sensitivity;
  default?: string;
  optional?: true;
}): EnvField<string | undefined> {
  const schemes = opts.protocols.map((p) => `${p}//`).join(' or ');
  return makeField<string | undefined>({
    env: opts.env,
    expected: `a ${schemes} URL${opts.requirePath ? ` with ${opts.requirePath}` : ''}`,
    sensitivity: opts.sensitivity ?? 'url',
    ...(opts.optional ? { default: undefined } : opts.default !== undefined ? { default: opts.default } : {}),
    parse: (raw) => {
      const s = raw.trim();
      let url: URL;
      try {
        url = new URL(s);
      } catch {
        // Not a URL at all; the error line says what is expected.
        return { ok: false };
      }
      if (!opts.protocols.includes(url.protocol) || url.hostname === '') return { ok: false };
      if (opts.requirePath && url.pathname.replace(/^\/+/, '') === '') return { ok: false };
      return { ok: true, value: s };
    },
  });
}

/**
 * A comma-separated list; blanks around items and empty items are dropped. Each item must
 * match `itemPattern`.
 */
export function listField(opts: {
  env: string;
  expected: string;
  itemPattern: RegExp;
  /** Resolve items in lower case. */
  lowerCase?: boolean;
  default?: readonly string[] | ((ctx: EnvContext) => readonly string[]);
  requiredReason?: (ctx: EnvContext) => string | undefined;
}): EnvField<readonly string[]> {
  return makeField<readonly string[]>({
    env: opts.env,
    expected: opts.expected,
    ...(opts.default !== undefined ? { default: opts.default } : {}),
    ...(opts.requiredReason ? { requiredReason: opts.requiredReason } : {}),
    parse: (raw) => {
      const items = raw
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '')
        .map((s) => (opts.lowerCase ? s.toLowerCase() : s));
      const bad = items.find((s) => !opts.itemPattern.test(s));
      if (bad !== undefined) return { ok: false, problem: `bad item ${JSON.stringify(bad)}` };
      return { ok: true, value: Object.freeze([...new Set(items)]) };
    },
  });
}

/** A filesystem path, resolved to an absolute one against the working directory (unset: `default`, or undefined when optional). */
export function pathField(opts: { env: string; default: string }): EnvField<string>;
export function pathField(opts: { env: string; optional: true }): EnvField<string | undefined>;
export function pathField(opts: { env: string; default?: string; optional?: true }): EnvField<string> | EnvField<string | undefined> {
  const fallback = opts.default;
  return makeField<string | undefined>({
    env: opts.env,
    expected: 'a filesystem path',
    default: fallback === undefined ? undefined : (ctx) => path.resolve(ctx.cwd, fallback),
    parse: (raw, ctx) => (raw.includes('\0') ? { ok: false } : { ok: true, value: path.resolve(ctx.cwd, raw) }),
  });
}

/** `true`/`false` (also `1`/`0`, `yes`/`no`, `on`/`off`). */
export function booleanField(opts: { env: string; default: boolean }): EnvField<boolean> {
  return makeField<boolean>({
    env: opts.env,
    expected: 'true or false',
    default: opts.default,
    parse: (raw) => {
      const s = raw.trim().toLowerCase();
      if (['true', '1', 'yes', 'on'].includes(s)) return { ok: true, value: true };
      if (['false', '0', 'no', 'off'].includes(s)) return { ok: true, value: false };
      return { ok: false };
    },
  });
}

/**
 * A value diff of two JSON values, leaf by leaf with old → new, secrets masked: the one helper
 * behind `axctl apply`'s dry run (a file's definition against the server's) and the console's
 * audit view (an entry's before against its after). Pure and without imports, so the console's
 * browser bundle takes it through the subpath `@ax/core/value-diff` without the rest of core.
 */

/** JSON with object keys sorted, so key order never counts as a difference. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** One changed value at a path (`schedule.expr`, `exec.env.TOKEN`). */
export interface ValueChange {
  readonly path: string;
  /** Canonical JSON of the old value (`undefined`: absent), {@link MASKED} where the value may be a secret. */
  readonly from: string | undefined;
  readonly to: string | undefined;
}

/** What a value under a secret key is shown as (the API's own mask, ADMIN-API.md "Secrets"). */
export const MASKED = '***';

/**
 * Keys whose values (and everything under them) are never shown: literal env values, headers,
 * credentials. A dry run's output goes into CI logs; an audit entry is read by every admin.
 */
export const SECRET_KEYS = /^(env|headers|password|secret|token|credentials?)$/i;

/** Longest value shown; the rest is cut with `…`. */
export const VALUE_MAX_CHARS = 120;

function shown(value: unknown, secret: boolean): string | undefined {
  if (value === undefined) return undefined;
  if (secret) return MASKED;
  const text = canonical(value);
  return text.length > VALUE_MAX_CHARS ? `${text.slice(0, VALUE_MAX_CHARS - 1)}…` : text;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

interface Walk {
  readonly walkAbsent: boolean;
  readonly out: ValueChange[];
}

function walk(path: string, from: unknown, to: unknown, secret: boolean, w: Walk): void {
  if (canonical(from) === canonical(to)) return;
  const absentAsEmpty = (v: unknown, other: unknown): unknown => (w.walkAbsent && v === undefined && isObject(other) ? {} : v);
  const a = absentAsEmpty(from, to);
  const b = absentAsEmpty(to, from);
  if (isObject(a) && isObject(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    for (const key of keys) walk(path === '' ? key : `${path}.${key}`, a[key], b[key], secret || SECRET_KEYS.test(key), w);
    return;
  }
  w.out.push({ path, from: shown(from, secret), to: shown(to, secret) });
}

/**
 * Each differing leaf of `from` and `to` under `path` (objects are walked key by key, sorted;
 * arrays and scalars compare whole): the old and new value as canonical JSON, `undefined` when
 * absent. Values under {@link SECRET_KEYS} (or all of them when `secret`) show as {@link MASKED}.
 * `walkAbsent`: an object whose other side is absent is walked too (each of its leaves added or
 * removed: an audit entry's create or delete), not shown whole.
 */
export function valueDiff(path: string, from: unknown, to: unknown, options: { secret?: boolean; walkAbsent?: boolean } = {}): ValueChange[] {
  const w: Walk = { walkAbsent: options.walkAbsent === true, out: [] };
  walk(path, from, to, options.secret === true || (path !== '' && SECRET_KEYS.test(path.split('.').at(-1) ?? '')), w);
  return w.out;
}

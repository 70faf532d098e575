/**
 * What every log line hides (pure): secret-named fields and a task's `exec.headers` /
 * `exec.env`, replaced by `REDACTED` before the line is written.
 *
 * Why not pino's `redact` option: with the paths it needs (each secret name at three depths,
 * through `*` wildcards) it cost ~20 µs per line and ~28 µs per child logger on this machine —
 * at a "job started" and a "job ended" line per job, more than the worker's own bookkeeping of
 * a no-op HTTP job (#24). This walk looks at each key of a line's object once: a few hundred
 * nanoseconds for the small objects ax logs, and it hides those names at any depth up to
 * `MAX_DEPTH`, not only at the three the paths listed.
 *
 * The caller's objects are never changed: an object with something to hide is copied (only
 * along the way to it); one with nothing to hide is returned as it is. Only plain objects and
 * arrays are walked: an `Error` goes to pino's serializer as it is (its message is the
 * caller's to keep clean; ax builds error messages without secret values).
 */

/** Replacement written in place of a redacted value. */
export const REDACTED = '[REDACTED]';

/** Field names whose value is hidden wherever they appear, lower-cased (keys are compared lower-cased: `Authorization` too). */
export const LOG_SECRET_KEYS: ReadonlySet<string> = new Set(
  [
    'authorization',
    'cookie',
    'set-cookie',
    'x-ax-signature',
    'password',
    'secret',
    'token',
    'accessToken',
    'refreshToken',
    'adminToken',
    'executorSecret',
    'apiKey',
    'credential',
    'AX_ADMIN_TOKEN',
    'AX_EXECUTOR_SECRET',
  ].map((k) => k.toLowerCase()),
);

/** Under an `exec` object (a task's executor), these are hidden whole: their values may be secrets. */
const EXEC_HIDDEN = new Set(['headers', 'env']);

/** Depth of nested objects looked into (0 = the line's own fields). */
export const MAX_DEPTH = 6;

const isPlainObject = (v: unknown): v is Record<string, unknown> => {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
};

/** `value` with every secret hidden (the same object when there was nothing to hide). */
export function redactSecrets<T>(value: T): T {
  return walk(value, 0, false) as T;
}

function walk(value: unknown, depth: number, underExec: boolean): unknown {
  if (depth > MAX_DEPTH) return value;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const next = walk(value[i], depth + 1, false);
      if (next !== value[i]) (out ??= value.slice())[i] = next;
    }
    return out ?? value;
  }
  if (!isPlainObject(value)) return value;
  let out: Record<string, unknown> | undefined;
  for (const key of Object.keys(value)) {
    const v = value[key];
    let next: unknown;
    if (v === undefined) continue;
    if (LOG_SECRET_KEYS.has(key.toLowerCase()) || (underExec && EXEC_HIDDEN.has(key))) next = REDACTED;
    else if (typeof v === 'object' && v !== null) next = walk(v, depth + 1, key === 'exec');
    else continue;
    if (next !== v) (out ??= { ...value })[key] = next;
  }
  return out ?? value;
}

/** Redis commands whose arguments carry a login: ioredis puts a failed command, arguments and all, on its error. */
const LOGIN_COMMANDS = new Set(['auth', 'hello']);

/**
 * An error as pino's serializer writes it, minus the arguments of a failed Redis `AUTH`/`HELLO`:
 * ioredis attaches `command: { name, args }` to a `ReplyError`, so a login refused (`WRONGPASS`,
 * e.g. an enrolled worker whose ACL user a Redis restart lost) would put the password in every
 * line that logs the error.
 */
export function hideLoginArgs<T>(serialized: T): T {
  if (!isPlainObjectLike(serialized)) return serialized;
  const command = (serialized as Record<string, unknown>).command;
  if (!isPlainObjectLike(command) || !LOGIN_COMMANDS.has(String((command as Record<string, unknown>).name).toLowerCase())) return serialized;
  return { ...serialized, command: { ...command, args: [REDACTED] } };
}

const isPlainObjectLike = (v: unknown): v is object => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * `"***"` sent back for the user-info of an http `exec.url` or for a string of a plugin's
 * `exec.config` (#44; redacted-secrets.ts has the env and header values): the stored value is
 * kept. A mask with no stored value behind it is refused, naming the field: storing the mask
 * would silently lose the secret. Pure: the caller reads the stored definition.
 */
import { REDACTED, formatPath, type Issue, type TaskDefinition } from '@ax/core';
import type { Parsed } from './route.js';

const fail = (path: string, taskName: string, why: string): { ok: false; issues: Issue[] } => ({
  ok: false,
  issues: [{ path, message: `${path}: ${JSON.stringify(REDACTED)} keeps the stored value of task ${JSON.stringify(taskName)}, but ${why}; send the value itself` }],
});

/** `url` with a `***` user-info replaced by the stored URL's user-info. */
export function restoreUrlUserInfo(taskName: string, url: string, stored: TaskDefinition | null): Parsed<string> {
  let next: URL;
  try {
    next = new URL(url);
  } catch {
    return { ok: true, value: url };
  }
  const masked = next.username === REDACTED && (next.password === '' || next.password === REDACTED);
  if (!masked) return { ok: true, value: url };
  if (stored === null) return fail('exec.url', taskName, 'a new task has no stored URL to keep the user-info of');
  if (stored.exec.type !== 'http') return fail('exec.url', taskName, `the stored task is a ${stored.exec.type} task`);
  const before = new URL(stored.exec.url);
  if (before.username === '' && before.password === '') return fail('exec.url', taskName, 'the stored URL has no user-info');
  next.username = before.username;
  next.password = before.password;
  return { ok: true, value: next.href };
}

/** `config` with every `"***"` string replaced by the stored config's string at the same path. */
export function restoreConfigStrings(taskName: string, plugin: string, config: Record<string, unknown>, stored: TaskDefinition | null): Parsed<Record<string, unknown>> {
  const kept = stored !== null && stored.exec.type === 'plugin' && stored.exec.name === plugin ? stored.exec.config : undefined;
  const issues: Issue[] = [];
  const walk = (value: unknown, before: unknown, path: Array<string | number>): unknown => {
    if (value === REDACTED) {
      if (typeof before === 'string') return before;
      const at = formatPath(['exec', 'config', ...path]);
      const why = kept === undefined ? (stored === null ? 'a new task has no stored value to keep' : `the stored task is not a task of plugin ${JSON.stringify(plugin)}`) : 'the stored config has no string there';
      issues.push(...fail(at, taskName, why).issues);
      return value;
    }
    if (Array.isArray(value)) return value.map((inner, i) => walk(inner, Array.isArray(before) ? before[i] : undefined, [...path, i]));
    if (value !== null && typeof value === 'object') {
      const out: Record<string, unknown> = {};
      const prior = before !== null && typeof before === 'object' && !Array.isArray(before) ? (before as Record<string, unknown>) : undefined;
      for (const [key, inner] of Object.entries(value as Record<string, unknown>)) out[key] = walk(inner, prior?.[key], [...path, key]);
      return out;
    }
    return value;
  };
  const value = walk(config, kept, []) as Record<string, unknown>;
  return issues.length > 0 ? { ok: false, issues } : { ok: true, value };
}

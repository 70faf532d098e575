/**
 * `"***"` sent back for a secret (ADMIN-API.md "Secrets"): an exported or viewer-read task shows
 * its literal `exec.env` (shell, python) and `exec.headers` (http) values, the user-info of an
 * http `exec.url` (`***:***@`) and every string of a plugin's `exec.config` as `"***"` (core's
 * `redactTaskSecrets`, #44); a definition that comes back with `"***"` for such a value, by PUT
 * or by import, keeps the stored value (of that key, of the URL's user-info, of that config
 * path). A `"***"` with no stored literal value
 * behind it (a new task, a key the stored task lacks or holds as a `secretRef`, another exec
 * type) is refused, naming the field: storing the mask would silently lose the secret.
 * Pure: the caller reads the stored definition.
 */
import { REDACTED, formatPath, type Issue, type SecretableValue, type TaskDefinition } from '@ax/core';
import { restoreConfigStrings, restoreUrlUserInfo } from './redacted-exec.js';
import type { Parsed } from './route.js';

/** The exec field whose literal values are shown as `"***"`, per exec type (as `redactTaskSecrets`). */
function maskedField(exec: TaskDefinition['exec']): { field: 'env' | 'headers'; values: Readonly<Record<string, SecretableValue>> } | undefined {
  if ((exec.type === 'shell' || exec.type === 'python') && exec.env !== undefined) return { field: 'env', values: exec.env };
  if (exec.type === 'http' && exec.headers !== undefined) return { field: 'headers', values: exec.headers };
  return undefined;
}

/** Why the stored definition has no literal value for `key` of `field`. */
function noStoredValue(stored: TaskDefinition | null, field: 'env' | 'headers', key: string): string {
  if (stored === null) return 'a new task has no stored value to keep';
  const kept = maskedField(stored.exec);
  if (kept === undefined || kept.field !== field) return `the stored task has no exec.${field} (it is a ${stored.exec.type} task${kept === undefined ? '' : ` with exec.${kept.field}`})`;
  const previous = kept.values[key];
  if (previous === undefined) return `the stored task has no value for ${JSON.stringify(key)}`;
  return `the stored value is a {"secretRef":…}, not a literal value`;
}

/**
 * `next` with every `"***"` env/header value replaced by the stored literal value of the same
 * key in `stored` (same exec type, exact key), or the issues of those that have none.
 *
 * @param next the definition received (PUT body, import document, create body).
 * @param stored the task's stored definition; `null` when the task does not exist (create, or
 *   an import of a new task).
 */
export function restoreRedactedSecrets(next: TaskDefinition, stored: TaskDefinition | null): Parsed<TaskDefinition> {
  const values = restoreValues(next, stored);
  if (!values.ok) return values;
  const exec = values.value.exec;
  if (exec.type === 'http') {
    const url = restoreUrlUserInfo(next.name, exec.url, stored);
    return url.ok ? { ok: true, value: { ...values.value, exec: { ...exec, url: url.value } } } : url;
  }
  if (exec.type === 'plugin') {
    const config = restoreConfigStrings(next.name, exec.name, exec.config, stored);
    return config.ok ? { ok: true, value: { ...values.value, exec: { ...exec, config: config.value } } } : config;
  }
  return values;
}

/** The env/header part of {@link restoreRedactedSecrets}. */
function restoreValues(next: TaskDefinition, stored: TaskDefinition | null): Parsed<TaskDefinition> {
  const masked = maskedField(next.exec);
  if (masked === undefined) return { ok: true, value: next };
  const keptField = stored === null ? undefined : maskedField(stored.exec);
  const kept = keptField !== undefined && keptField.field === masked.field ? keptField.values : undefined;
  const issues: Issue[] = [];
  const values: Record<string, SecretableValue> = {};
  for (const [key, value] of Object.entries(masked.values)) {
    if (value !== REDACTED) {
      values[key] = value;
      continue;
    }
    const previous = kept?.[key];
    if (typeof previous === 'string') {
      values[key] = previous;
      continue;
    }
    const path = formatPath(['exec', masked.field, key]);
    const why = noStoredValue(stored, masked.field, key);
    issues.push({
      path,
      message: `${path}: ${JSON.stringify(REDACTED)} keeps the stored value of task ${JSON.stringify(next.name)}, but ${why}; send the value itself or {"secretRef":"NAME"}`,
    });
  }
  if (issues.length > 0) return { ok: false, issues };
  const exec = next.exec;
  if (exec.type === 'shell' || exec.type === 'python') return { ok: true, value: { ...next, exec: { ...exec, env: values } } };
  if (exec.type === 'http') return { ok: true, value: { ...next, exec: { ...exec, headers: values } } };
  return { ok: true, value: next };
}

/**
 * Redaction of stored secrets for viewers, the audit log and logs (DESIGN §7): literal header
 * and env values, URL user-info and plugin config strings become `"***"`; `{"secretRef":…}` values are shown as they are (they name a
 * variable, not a secret).
 */
import type { SecretableValue } from './exec-schema.js';
import type { TaskDefinition } from './definition.js';

/** What a redacted literal value is replaced with. */
export const REDACTED = '***';

function redactValues(values: Readonly<Record<string, SecretableValue>>): Record<string, SecretableValue> {
  const out: Record<string, SecretableValue> = {};
  for (const [key, value] of Object.entries(values)) {
    out[key] = typeof value === 'string' ? REDACTED : { secretRef: value.secretRef };
  }
  return out;
}

/**
 * `url` with its user-info (`user:password@`) shown as `***:***@` (`***@` without a password);
 * the URL as it is when it has none or cannot be parsed.
 */
export function redactUrlUserInfo(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  if (parsed.username === '' && parsed.password === '') return url;
  parsed.username = REDACTED;
  if (parsed.password !== '') parsed.password = REDACTED;
  return parsed.href;
}

/** A plugin `config` with every string in it (at any depth) replaced by `"***"`; other values kept. */
export function redactConfigStrings(value: unknown): unknown {
  if (typeof value === 'string') return REDACTED;
  if (Array.isArray(value)) return value.map(redactConfigStrings);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value as Record<string, unknown>)) out[key] = redactConfigStrings(inner);
    return out;
  }
  return value;
}

/**
 * A copy of the definition with its stored secrets shown as `"***"` (always a new object; the
 * input is not changed): literal `exec.env` (shell, python) and `exec.headers` (http) values,
 * the user-info of an http `exec.url` and every string of a plugin's `exec.config` (#44: a
 * plugin's credentials live in its config). Works on any object carrying a definition's
 * `exec` (e.g. the task resource with `version`).
 */
export function redactTaskSecrets<T extends Pick<TaskDefinition, 'exec'>>(definition: T): T {
  const exec = definition.exec;
  if ((exec.type === 'shell' || exec.type === 'python') && exec.env !== undefined) {
    return { ...definition, exec: { ...exec, env: redactValues(exec.env) } };
  }
  if (exec.type === 'http') {
    return { ...definition, exec: { ...exec, url: redactUrlUserInfo(exec.url), ...(exec.headers === undefined ? {} : { headers: redactValues(exec.headers) }) } };
  }
  if (exec.type === 'plugin') {
    return { ...definition, exec: { ...exec, config: redactConfigStrings(exec.config) as Record<string, unknown> } };
  }
  return { ...definition };
}

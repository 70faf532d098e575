/**
 * Redaction of stored secrets for viewers, the audit log and logs (DESIGN §7): literal header
 * and env values become `"***"`; `{"secretRef":…}` values are shown as they are (they name a
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
 * A copy of the definition with literal `exec.env` (shell, python) and `exec.headers` (http) values
 * replaced by `"***"` (always a new object; the input is not changed). Works on any object carrying a definition's
 * `exec` (e.g. the task resource with `version`).
 */
export function redactTaskSecrets<T extends Pick<TaskDefinition, 'exec'>>(definition: T): T {
  const exec = definition.exec;
  if ((exec.type === 'shell' || exec.type === 'python') && exec.env !== undefined) {
    return { ...definition, exec: { ...exec, env: redactValues(exec.env) } };
  }
  if (exec.type === 'http' && exec.headers !== undefined) {
    return { ...definition, exec: { ...exec, headers: redactValues(exec.headers) } };
  }
  return { ...definition };
}

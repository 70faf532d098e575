/** `{"secretRef":"ENV_NAME"}` values, resolved from the worker's environment (§7). */
import type { SecretableValue } from '@ax/core';

/** A secretRef names a variable the worker does not have: the attempt fails, naming it. */
export class SecretMissingError extends Error {
  override readonly name = 'SecretMissingError';
  constructor(readonly variable: string) {
    super(`secret ${variable} is not set in the worker's environment`);
  }
}

/** A literal value as is; a secretRef as the worker's variable of that name. */
export function resolveSecretable(value: SecretableValue, env: NodeJS.ProcessEnv): string {
  if (typeof value === 'string') return value;
  const resolved = env[value.secretRef];
  if (resolved === undefined) throw new SecretMissingError(value.secretRef);
  return resolved;
}

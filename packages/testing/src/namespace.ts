import { randomBytes } from 'node:crypto';

/**
 * A fresh namespace for one test file, e.g. `axt_3f9c01ab`, usable as `AX_NAMESPACE`: every
 * Redis key, exchange and queue the code under test creates is then named under it, and
 * cleanup removes exactly those.
 */
export function uniqueNamespace(prefix = 'axt'): string {
  if (!/^[a-z0-9_.-]{1,40}$/.test(prefix)) {
    throw new Error(`uniqueNamespace: invalid prefix ${JSON.stringify(prefix)} (lower-case letters, digits, "_", "-", ".")`);
  }
  return `${prefix}_${randomBytes(4).toString('hex')}`;
}

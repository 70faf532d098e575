/**
 * The executor keys a business service holds (ADMIN-API.md "Teams"): the team's current key
 * and, while a rotation's grace lasts, the previous one. Accepted in two shapes and resolved
 * once, when an executor or client is created, into `TeamKeys`:
 *
 * - a list of what `GET /api/v1/teams/{team}/executor-key` answers:
 *   `[{ team: 'orders', keyVersion: 2, key: '…' }, { team: 'orders', keyVersion: 1, key: '…' }]`
 * - the map form `{ team: 'orders', keys: { 2: '…', 1: '…' } }`.
 */
import type { TeamKeys } from './signature.js';

/** One executor key, as `GET /api/v1/teams/{team}/executor-key` answers it (extra fields are ignored). */
export interface ExecutorKey {
  readonly team: string;
  readonly keyVersion: number;
  /** 64 hex digits. Never the master `AX_EXECUTOR_SECRET`. */
  readonly key: string;
}

/** The keys of one team: a list (current first or not, any order) or the map form. */
export type ExecutorKeys = TeamKeys | readonly ExecutorKey[];

/** The keys given to the SDK cannot be used; the message says what to pass. */
export class AxConfigError extends Error {
  override readonly name = 'AxConfigError';
}

const HINT = 'pass `keys: [{ team, keyVersion, key }]` as GET /api/v1/teams/{team}/executor-key answers (plus the previous key during a rotation), or `{ team, keys: { <version>: <key> } }`';

/** Checks `keys` and returns them in the map form; throws `AxConfigError` with one clear line. */
export function resolveKeys(keys: ExecutorKeys | undefined, where: string): TeamKeys {
  if (keys === undefined || keys === null || typeof keys !== 'object') throw new AxConfigError(`${where}: \`keys\` is required: ${HINT}`);
  const list: ExecutorKey[] = Array.isArray(keys)
    ? [...(keys as readonly ExecutorKey[])]
    : Object.entries((keys as TeamKeys).keys ?? {}).map(([version, key]) => ({ team: (keys as TeamKeys).team, keyVersion: Number(version), key }));
  if (list.length === 0) throw new AxConfigError(`${where}: \`keys\` holds no key: ${HINT}`);
  const team = list[0]?.team;
  const resolved: Record<number, string> = {};
  for (const entry of list) {
    if (typeof entry.team !== 'string' || entry.team === '') throw new AxConfigError(`${where}: every key needs its team: ${HINT}`);
    if (entry.team !== team) throw new AxConfigError(`${where}: \`keys\` mixes teams ${JSON.stringify(team)} and ${JSON.stringify(entry.team)}; one executor verifies one team's calls`);
    if (!Number.isInteger(entry.keyVersion) || entry.keyVersion < 1) throw new AxConfigError(`${where}: key version ${JSON.stringify(entry.keyVersion)} is not a positive integer`);
    if (typeof entry.key !== 'string' || entry.key === '') throw new AxConfigError(`${where}: the key of version ${entry.keyVersion} is empty (is the environment variable set?)`);
    if (resolved[entry.keyVersion] !== undefined && resolved[entry.keyVersion] !== entry.key) throw new AxConfigError(`${where}: two different keys for version ${entry.keyVersion}`);
    resolved[entry.keyVersion] = entry.key;
  }
  return { team: team as string, keys: resolved };
}

/**
 * Per-team executor keys (ADMIN-API.md "Teams", DESIGN §11): the key of version `v` of a team
 * is the lowercase hex of HMAC-SHA256(`AX_EXECUTOR_SECRET`, "ax-executor-key\n<team>\n<v>").
 * Workers and admin-api derive it from the master secret, so nothing distributes keys, and one
 * team's key tells nothing about another's (nor about the master secret).
 */
import { createHmac } from 'node:crypto';

/** The executor key of `team` at `keyVersion`, derived from the master secret. */
export function deriveExecutorKey(masterSecret: string, team: string, keyVersion: number): string {
  return createHmac('sha256', masterSecret).update(`ax-executor-key\n${team}\n${keyVersion}`).digest('hex');
}

/**
 * Derived keys by (team, version), for the hot paths (a worker signs every HTTP call). The
 * derivation is cheap but not free (~2 µs), and a process sees a handful of teams.
 */
export class ExecutorKeyring {
  private readonly keys = new Map<string, string>();

  constructor(private readonly masterSecret: string) {}

  /** The key of `team` at `keyVersion`. */
  keyOf(team: string, keyVersion: number): string {
    const id = `${keyVersion}\n${team}`;
    let key = this.keys.get(id);
    if (key === undefined) {
      // a bound against a caller that sends made-up team names: the map never grows unbounded
      if (this.keys.size >= 10_000) this.keys.clear();
      key = deriveExecutorKey(this.masterSecret, team, keyVersion);
      this.keys.set(id, key);
    }
    return key;
  }
}

/** A team's key state as stored (`team.key_version`, `team.previous_key_valid_until`). */
export interface TeamKeyState {
  readonly keyVersion: number;
  readonly previousKeyValidUntil: Date | null;
}

/**
 * The key versions a receiver accepts for a team at `nowMs`: the current one, and during a
 * rotation's grace (`AX_EXECUTOR_KEY_GRACE_S`) the previous one as well.
 */
export function acceptedKeyVersions(team: TeamKeyState, nowMs: number): number[] {
  const graceOpen = team.previousKeyValidUntil !== null && team.previousKeyValidUntil.getTime() > nowMs && team.keyVersion > 1;
  return graceOpen ? [team.keyVersion, team.keyVersion - 1] : [team.keyVersion];
}

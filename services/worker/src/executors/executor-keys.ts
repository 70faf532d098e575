/**
 * Where the http executor gets the key it signs a team's call with (ADMIN-API.md "Teams", R25):
 *
 * - an unenrolled worker derives every team's key from `AX_EXECUTOR_SECRET` (`derivedKeys`);
 * - an enrolled worker holds no master secret, only the keys its enrollment's answer gave it
 *   (`EnrollmentKeys`): the current version of each of its teams, and the previous one while a
 *   rotation's grace is open. The answer is fetched again every `AX_WORKER_REFRESH_MS`, so a
 *   rotated key arrives without a restart; a dispatch naming a version not held yet asks for a
 *   fresh answer at once (at most one request at a time) before the attempt gives up.
 */
import { ExecutorKeyring } from '@ax/core';

/** Executor keys by team and version. */
export interface ExecutorKeys {
  /** The key of `team` at `version`, or undefined when this worker does not hold it. */
  keyOf(team: string, version: number): string | undefined;
  /** Asks for the keys again (an enrolled worker's admin-api answer); resolves when done, never rejects. */
  refresh?(): Promise<void>;
  /** Why a key is missing, for the failed attempt's error. */
  missing(team: string, version: number): string;
}

/** Every team's keys, derived from the master secret (an unenrolled worker). */
export function derivedKeys(masterSecret: string): ExecutorKeys {
  const keyring = new ExecutorKeyring(masterSecret);
  return {
    keyOf: (team, version) => keyring.keyOf(team, version),
    missing: (team, version) => `no executor key for team ${team} version ${version}`,
  };
}

/** One key of an enrollment's answer. */
export interface EnrollmentKey {
  readonly team: string;
  readonly version: number;
  readonly key: string;
}

/** The keys an enrolled worker was given; replaced as a whole by each answer. */
export class EnrollmentKeys implements ExecutorKeys {
  private keys = new Map<string, string>();
  private fetching: Promise<void> | undefined;

  /**
   * @param enrollmentId named in the error of a missing key.
   * @param fetchAgain asks admin-api for the enrollment again and applies the answer (`replace`); never rejects.
   */
  constructor(
    private readonly enrollmentId: string,
    keys: readonly EnrollmentKey[],
    private readonly fetchAgain?: () => Promise<void>,
  ) {
    this.replace(keys);
  }

  /** The answer's keys, replacing the previous ones (a key no longer listed is no longer used). */
  replace(keys: readonly EnrollmentKey[]): void {
    this.keys = new Map(keys.map((k) => [`${k.version}\n${k.team}`, k.key]));
  }

  /** How many keys are held. */
  get size(): number {
    return this.keys.size;
  }

  keyOf(team: string, version: number): string | undefined {
    return this.keys.get(`${version}\n${team}`);
  }

  refresh(): Promise<void> {
    if (this.fetchAgain === undefined) return Promise.resolve();
    this.fetching ??= this.fetchAgain().finally(() => {
      this.fetching = undefined;
    });
    return this.fetching;
  }

  missing(team: string, version: number): string {
    return `enrollment ${this.enrollmentId} holds no executor key for team ${team} version ${version} (not one of its teams, or the key is not current)`;
  }
}

/**
 * A team's `maxRunning` at dispatch (ADMIN-API.md "Teams", DESIGN §11): at most that many of its
 * instances DISPATCHED or RUNNING at once. Pure bookkeeping for one claim: the broker reads the
 * limits and the active counts under the team rows' locks and asks, instance by instance,
 * whether one more may start. Teams without a limit are never asked about (and always have room).
 */

/** Room left per limited team during one claim. */
export class TeamQuota {
  readonly #room = new Map<string, number>();
  readonly #limits: ReadonlyMap<string, number>;

  /**
   * @param limits `maxRunning` by team (teams absent: no limit).
   * @param active DISPATCHED or RUNNING instances by team now (absent: 0).
   */
  constructor(limits: ReadonlyMap<string, number>, active: ReadonlyMap<string, number>) {
    this.#limits = new Map(limits);
    for (const [team, max] of limits) this.#room.set(team, max - (active.get(team) ?? 0));
  }

  /** The `maxRunning` of `team`, or undefined without a limit. */
  limit(team: string): number | undefined {
    return this.#limits.get(team);
  }

  /** True when `team` has a limit and no room left under it. */
  isFull(team: string): boolean {
    const room = this.#room.get(team);
    return room !== undefined && room <= 0;
  }

  /** Takes one run of `team` when it has room (always, without a limit); false when full. */
  take(team: string): boolean {
    const room = this.#room.get(team);
    if (room === undefined) return true;
    if (room <= 0) return false;
    this.#room.set(team, room - 1);
    return true;
  }

  /** Gives back `count` runs of `team` (runs canceled in this claim, e.g. block `cover`). */
  give(team: string, count = 1): void {
    const room = this.#room.get(team);
    if (room !== undefined) this.#room.set(team, room + count);
  }
}

/** The limited teams with no room left: `active >= maxRunning`. */
export function teamsAtLimit(limits: ReadonlyMap<string, number>, active: ReadonlyMap<string, number>): string[] {
  const out: string[] = [];
  for (const [team, max] of limits) if ((active.get(team) ?? 0) >= max) out.push(team);
  return out.sort();
}

/**
 * The teams as the dispatch path needs them (ADMIN-API.md "Teams"): each team's executor key
 * version (carried in every dispatch item, so workers sign with the current key) and its
 * `maxRunning`. Read in full every few seconds and whenever `<ns>:task-changed` fires (admin-api
 * publishes it when a team changes), so the claim transaction reads no team rows. A team
 * created a moment ago and not loaded yet is served as a fresh team: key version 1, no limit.
 */
import { listTeams, type StorePool, type TeamRecord } from '@ax/store';

/** What the dispatch path reads of a team. */
export interface TeamView {
  readonly name: string;
  readonly keyVersion: number;
  readonly previousKeyValidUntil: Date | null;
  readonly maxRunning: number | null;
  /** The team's `httpAllow`, carried in its dispatch items (null = no narrowing). */
  readonly httpAllow: readonly string[] | null;
  /** Share of contended slots (R23, fair-claim.ts). */
  readonly weight: number;
}

/** Teams read per refresh at most: far beyond any real installation, a bound all the same. */
const TEAMS_LOADED_MAX = 100_000;

export class TeamDirectory {
  private teams = new Map<string, TeamView>();
  /** The teams with a limit, computed once per refresh (the claim asks on every iteration). */
  private limits: ReadonlyMap<string, number> = new Map();

  /** The team as last loaded, or a fresh team's defaults. */
  get(name: string): TeamView {
    return this.teams.get(name) ?? { name, keyVersion: 1, previousKeyValidUntil: null, maxRunning: null, httpAllow: null, weight: 1 };
  }

  /** Teams with a `maxRunning`, by name (empty when none has one: the claim then does nothing extra). */
  limited(): ReadonlyMap<string, number> {
    return this.limits;
  }

  /** Replaces the view with what is stored now. */
  async refresh(pool: StorePool): Promise<void> {
    const rows: TeamRecord[] = await listTeams(pool, { names: null, limit: TEAMS_LOADED_MAX });
    this.teams = new Map(
      rows.map((t) => [t.name, { name: t.name, keyVersion: t.keyVersion, previousKeyValidUntil: t.previousKeyValidUntil, maxRunning: t.maxRunning, httpAllow: t.httpAllow, weight: t.weight }]),
    );
    const limits = new Map<string, number>();
    for (const team of this.teams.values()) if (team.maxRunning !== null) limits.set(team.name, team.maxRunning);
    this.limits = limits;
  }
}

/**
 * R23's fair share of contended slots between teams (DESIGN §10, ADMIN-API.md "Teams" `weight`):
 * pure, so the broker's claim and its tests compute the same thing.
 *
 * Water-filling, as the Linux CFS picks the runnable entity with the least weighted runtime:
 * the next slot goes to the team whose `(running + given) / weight` is lowest among the teams
 * that still have startable work; ties go to the team named first (the caller's order). A team
 * with weight 2 therefore ends up with twice the slots of a team with weight 1, counting what
 * each already runs, and a team with nothing running is served before a team with a flood
 * running. Priority plays no part here: it orders work inside a team.
 */

/** One team competing for slots. */
export interface TeamDemand {
  readonly team: string;
  /** Instances of the team DISPATCHED or RUNNING now. */
  readonly running: number;
  /** Share of contended slots (default 1); values below 1 count as 1. */
  readonly weight: number;
  /** How many it could take now (startable instances read or expected); Infinity = unknown. */
  readonly wants: number;
}

function weightOf(d: TeamDemand): number {
  return Number.isFinite(d.weight) && d.weight >= 1 ? d.weight : 1;
}

/**
 * Splits `slots` between the teams by water-filling (see the file comment). Teams absent from
 * the result get none. Never gives a team more than it `wants`.
 */
export function fairShares(demands: readonly TeamDemand[], slots: number): Map<string, number> {
  const given = new Map<string, number>();
  for (const team of fairSequence(demands, slots)) given.set(team, (given.get(team) ?? 0) + 1);
  return given;
}

/**
 * The order in which `slots` slots go to the teams, one entry per slot (the team's name), by
 * water-filling. Shorter than `slots` when the teams want fewer in total.
 */
export function fairSequence(demands: readonly TeamDemand[], slots: number): string[] {
  const state = demands.map((d) => ({ d, w: weightOf(d), taken: 0 }));
  const out: string[] = [];
  for (let i = 0; i < slots; i++) {
    let best: (typeof state)[number] | undefined;
    let bestLoad = Number.POSITIVE_INFINITY;
    for (const s of state) {
      if (s.taken >= s.d.wants) continue;
      const load = (s.d.running + s.taken) / s.w;
      if (load < bestLoad) {
        best = s;
        bestLoad = load;
      }
    }
    if (best === undefined) break;
    best.taken++;
    out.push(best.d.team);
  }
  return out;
}

/**
 * Interleaves each team's instances (each list already in the team's own order: priority, then
 * due time) in water-filling order, so that whatever stops the caller early (slots running out
 * while routing) has served the teams by their shares. Every item appears once.
 */
export function fairOrder<T>(byTeam: ReadonlyMap<string, readonly T[]>, running: ReadonlyMap<string, number>, weights: ReadonlyMap<string, number>): T[] {
  const demands: TeamDemand[] = [...byTeam].map(([team, items]) => ({ team, running: running.get(team) ?? 0, weight: weights.get(team) ?? 1, wants: items.length }));
  const total = demands.reduce((n, d) => n + d.wants, 0);
  const next = new Map<string, number>();
  const out: T[] = [];
  for (const team of fairSequence(demands, total)) {
    const i = next.get(team) ?? 0;
    next.set(team, i + 1);
    out.push((byTeam.get(team) as readonly T[])[i] as T);
  }
  return out;
}

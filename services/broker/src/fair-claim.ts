/**
 * The claim of R23 (#45 "Noisy neighbours"): each team with due work claims, in SQL, only what
 * can start now (store `claimStartable`: busy serial tasks, queues beyond their head, rerun
 * batches at their concurrency, rows no worker with a free slot could take and held backlogs
 * are neither locked nor counted), in shares set by the teams' weights and what each already
 * runs (`fairShares`, water-filling); the claimed rows are then ordered so that routing, which
 * stops when the slots run out, serves the teams by the same shares (`fairOrder`). Priority
 * orders work inside a team. Rows that need R11's bookkeeping rather than a slot (no eligible
 * worker at all, a deleted task) are claimed last, with what room is left.
 *
 * Across brokers: claims take turns (dispatch-turn.ts), each reading the running counts
 * committed before it, so every claim round divides the slots free at that moment by the same
 * rule; see docs/architecture.md "Fair share".
 */
import { fairOrder, fairShares, freeSlots, type WorkerSnapshot } from '@ax/core';
import { activeRunsByTeam, claimStartable, claimUnroutable, teamsWithPending, type ClaimedInstance, type Queryable, type WorkerCapability } from '@ax/store';

/** Key of the rows written before 0010, which have no team of their own. */
const NO_TEAM = '\u0000';

/** What the claim needs from the broker. */
export interface FairClaimInput {
  /** Rows to claim at most. */
  readonly limit: number;
  readonly workers: readonly WorkerSnapshot[];
  /** Teams at their `maxRunning`: not claimed for. */
  readonly skipTeams: readonly string[];
  readonly defer?: { readonly belowPriority: number; readonly taskIds: readonly string[] } | undefined;
  /** A team's weight (R23). */
  readonly weightOf: (team: string) => number;
  /** Rows claimed for bookkeeping at most (R11's NO_WORKER, deleted tasks). */
  readonly bookkeepingLimit: number;
}

/** What non-draining workers can take: distinct (teams, tags); `withFreeSlot` keeps only those with a free slot. */
export function capabilitiesOf(workers: readonly WorkerSnapshot[], withFreeSlot: boolean): WorkerCapability[] {
  const out = new Map<string, WorkerCapability>();
  for (const w of workers) {
    if (w.draining || (withFreeSlot && freeSlots(w) <= 0)) continue;
    const teams = w.teams === undefined || w.teams.length === 0 ? null : [...w.teams].sort();
    const tags = [...w.tags].sort();
    out.set(JSON.stringify([teams, tags]), { teams, tags });
  }
  return [...out.values()];
}

/** Claims fairly inside the claim transaction; returns the rows in the order to route them. */
export async function claimFairly(conn: Queryable, input: FairClaimInput): Promise<ClaimedInstance[]> {
  const startable = capabilitiesOf(input.workers, true);
  const skip = new Set(input.skipTeams);
  const teams = (await teamsWithPending(conn)).map((t) => t ?? NO_TEAM).filter((t) => !skip.has(t));
  const byTeam = new Map<string, ClaimedInstance[]>();
  let claimed = 0;
  if (teams.length > 0 && startable.length > 0) {
    // One team: its claim is the whole claim, no counts needed.
    const running = teams.length > 1 ? await activeRunsByTeam(conn) : new Map<string, number>();
    const weights = new Map(teams.map((t) => [t, t === NO_TEAM ? 1 : input.weightOf(t)]));
    const claimFor = async (team: string, limit: number): Promise<number> => {
      const had = byTeam.get(team) ?? [];
      const rows = await claimStartable(conn, {
        team: team === NO_TEAM ? null : team,
        limit,
        capabilities: startable,
        defer: input.defer,
        excludeIds: had.map((r) => r.id),
        skipTeams: input.skipTeams,
      });
      byTeam.set(team, [...had, ...rows]);
      claimed += rows.length;
      return rows.length;
    };
    const demand = (wanting: readonly string[]) =>
      wanting.map((team) => ({ team, running: (running.get(team) ?? 0) + (byTeam.get(team)?.length ?? 0), weight: weights.get(team) ?? 1, wants: Number.POSITIVE_INFINITY }));
    // First pass: every team its share. Second: what teams with less startable work left goes
    // to those that filled theirs (they may have more).
    const full: string[] = [];
    for (const [team, share] of fairShares(demand(teams), input.limit)) {
      if ((await claimFor(team, share)) >= share) full.push(team);
    }
    const room = input.limit - claimed;
    if (room > 0 && full.length > 0) {
      for (const [team, share] of fairShares(demand(full), room)) await claimFor(team, share);
    }
    for (const [team, rows] of [...byTeam]) if (rows.length === 0) byTeam.delete(team);
    const ordered = fairOrder(byTeam, running, weights);
    return [...ordered, ...(await bookkeeping(conn, input, Math.min(input.bookkeepingLimit, input.limit - claimed)))];
  }
  return bookkeeping(conn, input, Math.min(input.bookkeepingLimit, input.limit));
}

/** R11: rows no live worker could take (and of deleted tasks), with what room the claim left. */
async function bookkeeping(conn: Queryable, input: FairClaimInput, limit: number): Promise<ClaimedInstance[]> {
  if (limit <= 0) return [];
  return claimUnroutable(conn, { limit, capabilities: capabilitiesOf(input.workers, false), skipTeams: input.skipTeams });
}

/**
 * Which held dispatches to recall (R9 prefetch): pure, no I/O (recalls.ts does the reading and
 * the sending). A worker holds dispatches beyond its slots and starts them itself as slots free;
 * behind a long job a held one could wait a whole run while another worker sits idle. The policy:
 * a dispatch held longer than `afterMs` is recalled when some *other* worker has a free slot now,
 * and never more of them in one pass than there are such free slots (each recalled dispatch has
 * somewhere to start). Longest-held first. The released instance goes back to PENDING and the
 * next claim routes it like any other (it may land on the same worker again when only that one
 * can take it: a round trip lost, nothing more).
 */

/** A worker's held dispatches as its registry entry lists them. */
export interface Holder {
  readonly workerId: string;
  /** Held dispatches, each with how long it has been held by now (ms). */
  readonly held: ReadonlyArray<{ readonly executionId: string; readonly heldForMs: number }>;
}

/** One recall message to send: a worker and the held dispatches to recall from it. */
export interface Recall {
  readonly workerId: string;
  readonly executionIds: string[];
}

/**
 * The recalls of one pass. `freeSlots`: per worker, slots free to start something now (idle
 * capacity, holders included: their count is not spent on their own held work); `skip`: ids
 * recalled lately and not yet answered.
 */
export function planRecalls(holders: readonly Holder[], freeSlots: ReadonlyMap<string, number>, afterMs: number, skip: ReadonlySet<string> = new Set()): Recall[] {
  const candidates: Array<{ workerId: string; executionId: string; heldForMs: number }> = [];
  for (const h of holders) for (const d of h.held) if (d.heldForMs >= afterMs && !skip.has(d.executionId)) candidates.push({ workerId: h.workerId, ...d });
  if (candidates.length === 0) return [];
  candidates.sort((a, b) => b.heldForMs - a.heldForMs || (a.executionId < b.executionId ? -1 : 1));
  let total = 0;
  for (const n of freeSlots.values()) total += Math.max(0, n);
  const out = new Map<string, string[]>();
  let budget = total;
  for (const c of candidates) {
    if (budget <= 0) break;
    // A holder's own free slots are no place to send its work elsewhere.
    if (total - Math.max(0, freeSlots.get(c.workerId) ?? 0) <= 0) continue;
    const ids = out.get(c.workerId) ?? [];
    ids.push(c.executionId);
    out.set(c.workerId, ids);
    budget -= 1;
  }
  return [...out].map(([workerId, executionIds]) => ({ workerId, executionIds }));
}

/**
 * The routing strategies of a task's `route` (DESIGN §2, §4, R21). Pure: randomness and the
 * round-robin cursor are passed in; the broker keeps the cursor (e.g. per task in Redis).
 */
import { loadScore } from './load-score.js';
import { rankByRendezvous } from './rendezvous-hash.js';
import { eligibleWorkers, type RouteRequest, type WorkerSnapshot } from './worker-snapshot.js';

/** Scores closer than this count as a tie. */
const SCORE_EPSILON = 1e-9;

function byId(a: WorkerSnapshot, b: WorkerSnapshot): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * `load`: the eligible worker with the lowest `loadScore`; among equal scores one is picked
 * with `random` (a number in [0, 1)). Null when none is eligible.
 */
export function pickByLoad(
  workers: readonly WorkerSnapshot[],
  request: RouteRequest,
  random: () => number,
): WorkerSnapshot | null {
  const candidates = eligibleWorkers(workers, request);
  if (candidates.length === 0) return null;
  const scored = candidates.map((worker) => ({ worker, score: loadScore(worker) }));
  const best = Math.min(...scored.map((s) => s.score));
  const tied = scored
    .filter((s) => s.score - best <= SCORE_EPSILON)
    .map((s) => s.worker)
    .sort(byId);
  const index = Math.min(tied.length - 1, Math.max(0, Math.floor(random() * tied.length)));
  return tied[index] ?? null;
}

/** A round-robin pick and the cursor to pass next time. */
export interface RoundRobinPick {
  worker: WorkerSnapshot;
  nextCursor: number;
}

/**
 * `round_robin`: eligible workers in id order; picks the one at `cursor` (modulo their number)
 * and returns `nextCursor` = its index + 1. Start with cursor 0. Null when none is eligible.
 */
export function pickRoundRobin(
  workers: readonly WorkerSnapshot[],
  request: RouteRequest,
  cursor: number,
): RoundRobinPick | null {
  const candidates = eligibleWorkers(workers, request).sort(byId);
  if (candidates.length === 0) return null;
  const whole = Number.isFinite(cursor) ? Math.trunc(cursor) : 0;
  const index = ((whole % candidates.length) + candidates.length) % candidates.length;
  const worker = candidates[index] as WorkerSnapshot;
  return { worker, nextCursor: index + 1 };
}

/**
 * `consistent_hash`: rendezvous hashing of `key` (e.g. the task name) over the eligible
 * workers, so the same key keeps landing on the same worker while it is eligible, and
 * unrelated workers joining or leaving do not move it. Null when none is eligible.
 */
export function pickByHash(workers: readonly WorkerSnapshot[], request: RouteRequest, key: string): WorkerSnapshot | null {
  return rankByRendezvous(key, eligibleWorkers(workers, request))[0] ?? null;
}

/** One shard of a broadcast. */
export interface BroadcastTarget {
  worker: WorkerSnapshot;
  /** 0-based shard number. */
  shardIndex: number;
  /** Number of shards (= targets). */
  shardTotal: number;
}

/**
 * `broadcast`: every eligible worker (tags, free slot, not draining, not excluded), in id
 * order, each with its `shardIndex` of `shardTotal` (R21). Empty when none is eligible.
 */
export function broadcastTargets(workers: readonly WorkerSnapshot[], request: RouteRequest): BroadcastTarget[] {
  const candidates = eligibleWorkers(workers, request).sort(byId);
  return candidates.map((worker, shardIndex) => ({ worker, shardIndex, shardTotal: candidates.length }));
}

/** One entry point for the broker: route an instance by its task's strategy. */
import type { RouteStrategy } from '../task/definition.js';
import { broadcastTargets, pickByHash, pickByLoad, pickRoundRobin, type BroadcastTarget } from './strategies.js';
import { explainNoWorker, type RouteRequest, type WorkerSnapshot } from './worker-snapshot.js';

/** Inputs of the strategies that need them. */
export interface RouteContext {
  /** Numbers in [0, 1), for load ties. */
  random: () => number;
  /** Round-robin cursor (default 0). */
  cursor?: number;
  /** Consistent-hash key (default: the empty string; pass the task name). */
  hashKey?: string;
}

/** Where an instance goes. */
export type RouteDecision =
  | { kind: 'none'; explanation: string }
  | { kind: 'single'; worker: WorkerSnapshot; nextCursor?: number }
  | { kind: 'broadcast'; targets: BroadcastTarget[] };

/** Routes an instance with `strategy`; `none` carries a sentence for the `NO_WORKER` event. */
export function routeInstance(
  strategy: RouteStrategy,
  workers: readonly WorkerSnapshot[],
  request: RouteRequest,
  context: RouteContext,
): RouteDecision {
  const none = (): RouteDecision => ({ kind: 'none', explanation: explainNoWorker(workers, request) });
  switch (strategy) {
    case 'load': {
      const worker = pickByLoad(workers, request, context.random);
      return worker === null ? none() : { kind: 'single', worker };
    }
    case 'round_robin': {
      const pick = pickRoundRobin(workers, request, context.cursor ?? 0);
      return pick === null ? none() : { kind: 'single', worker: pick.worker, nextCursor: pick.nextCursor };
    }
    case 'consistent_hash': {
      const worker = pickByHash(workers, request, context.hashKey ?? '');
      return worker === null ? none() : { kind: 'single', worker };
    }
    case 'broadcast': {
      const targets = broadcastTargets(workers, request);
      return targets.length === 0 ? none() : { kind: 'broadcast', targets };
    }
  }
}

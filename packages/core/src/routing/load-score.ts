/** The load score of DESIGN §4: lower is better. */
import type { WorkerSnapshot } from './worker-snapshot.js';

/** Weight of the occupancy term (`running / cores`). */
export const OCCUPANCY_WEIGHT = 0.7;
/** Weight of the duration term (`avgDurationMs5m / 1000`). */
export const DURATION_WEIGHT = 0.3;

/** `(running/cores)·0.7 + (avgDurationMs5m/1000)·0.3`; cores ≤ 0 count as 1. Lower wins. */
export function loadScore(worker: Pick<WorkerSnapshot, 'running' | 'cores' | 'avgDurationMs5m'>): number {
  const cores = worker.cores > 0 ? worker.cores : 1;
  return (worker.running / cores) * OCCUPANCY_WEIGHT + (Math.max(0, worker.avgDurationMs5m) / 1000) * DURATION_WEIGHT;
}

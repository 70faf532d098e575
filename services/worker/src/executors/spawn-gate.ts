/**
 * What every job that leads its own process group does between spawn and start (R13): record
 * the group in the outbox before the job may run, then arm the cancel. Shell jobs and plugin
 * runs wait on a gate (stdin / an IPC message) that the caller opens only when this says so.
 */
import { processStartTime, signalGroup } from '../process-group.js';
import { notStartedOutcome, type ExecutionOutcome, type ExecutionRequest } from './types.js';

/**
 * Records `pgid` through `request.onSpawn` and subscribes `onAbort` to the request's signal.
 * Returns true when the caller may open the gate. Otherwise the run is already settled: the
 * group was killed and `finish` got a failure (recording failed) or a not-started outcome
 * (`request.mayStart` said no), or `onAbort` ran (the request was aborted before the job started).
 */
export function recordGroupAndArm(
  pgid: number,
  request: ExecutionRequest,
  onAbort: () => void,
  finish: (outcome: ExecutionOutcome) => void,
): boolean {
  try {
    request.onSpawn?.(pgid, processStartTime(pgid) ?? '0');
  } catch (error) {
    signalGroup(pgid, 'SIGKILL');
    finish({ outcome: 'FAILED', exitCode: null, error: `could not record the process group: ${(error as Error).message}` });
    return false;
  }
  if (request.signal.aborted) {
    onAbort();
    return false;
  }
  // #23: the last moment before the job's command runs; the process waits at its gate.
  const blocked = request.mayStart?.() ?? null;
  if (blocked !== null) {
    signalGroup(pgid, 'SIGKILL');
    finish(notStartedOutcome(blocked));
    return false;
  }
  request.signal.addEventListener('abort', onAbort, { once: true });
  return true;
}

/**
 * What the log endpoints tell about an execution's output (ADMIN-API.md "Job output (logs)"):
 * its size so far, whether it was truncated, whether it is complete, as headers; shared by the
 * paged GETs and the SSE stream.
 *
 * Complete = the execution is final AND its end marker is stored AND every byte the end marker
 * announces is stored (less the bytes dropped past `AX_LOG_MAX_BYTES`). Only then are gaps
 * skipped: before that a gap is a chunk still on its way.
 */
import { logViewState, readLogLayout, type ExecutionRecord, type LogView, type LogViewState, type Queryable } from '@ax/store';

/** Execution states in which more output may still come. */
const LIVE_EXECUTION_STATES: ReadonlySet<string> = new Set(['DISPATCHED', 'RUNNING', 'ASYNC']);

/** Whether an execution has ended (no more output will be produced by it). */
export function isExecutionFinal(execution: Pick<ExecutionRecord, 'state'>): boolean {
  return !LIVE_EXECUTION_STATES.has(execution.state);
}

/** The state of one view, with completeness. */
export interface LogStatus extends LogViewState {
  /** The execution is final and all its output is stored. */
  readonly complete: boolean;
  /** Pages may skip gaps (they are the dropped bytes of a truncated output). */
  readonly skipGaps: boolean;
}

/** Reads the status of `view` of `execution`'s output. */
export async function readLogStatus(db: Queryable, execution: Pick<ExecutionRecord, 'executionId' | 'state'>, view: LogView): Promise<LogStatus> {
  const state = logViewState(await readLogLayout(db, execution.executionId), view);
  return { ...state, complete: state.stored && isExecutionFinal(execution), skipGaps: state.stored && state.truncated };
}

/** Response headers of the log endpoints (names as in the contract, plus the extensions). */
export const LOG_HEADERS = {
  size: 'X-Ax-Log-Size',
  complete: 'X-Ax-Log-Complete',
  truncated: 'X-Ax-Log-Truncated',
  offset: 'X-Ax-Log-Offset',
  nextOffset: 'X-Ax-Log-Next-Offset',
  executionId: 'X-Ax-Execution-Id',
} as const;

/** Building the items the worker sends (validated before they enter the outbox). */
import {
  acceptResultItem,
  OUTPUT_TAIL_MAX_BYTES,
  REFUSAL_DETAIL_MAX_LENGTH,
  RESULT_ERROR_MAX_LENGTH,
  refusalItemSchema,
  resultItemSchema,
  type DispatchItem,
  type RefusalReason,
  type ResultItem,
} from '@ax/core';
import type { ExecutionOutcome } from './executors/types.js';
import type { ResultEnd } from './logs/attempt-log.js';
import { withCarriableData } from './result-data.js';

/**
 * A result item from an executor outcome; never invalid (falls back to a minimal item). The
 * outcome's `data` is checked first (`result-data.ts`, #45): data the item cannot carry fails
 * the attempt here, alone, instead of the batched message that would carry it.
 * `end`: what of the attempt's output travels in this result (`LogShipper.end`: the empty
 * output's `printedNothing`, or a short rest of output and its end), so even the minimal item keeps it.
 */
export function resultItem(
  item: Pick<DispatchItem, 'executionId' | 'instanceId'>,
  outcome: ExecutionOutcome,
  startedAtMs: number | undefined,
  endedAtMs: number,
  end?: ResultEnd,
): ResultItem {
  outcome = withCarriableData(outcome);
  const printedNothing = end !== undefined && 'printedNothing' in end ? true : undefined;
  const output = end !== undefined && 'output' in end ? end.output : undefined;
  const full = {
    executionId: item.executionId,
    instanceId: item.instanceId,
    outcome: outcome.outcome,
    exitCode: outcome.exitCode,
    outputTail: outcome.outputTail === undefined ? undefined : capBytes(outcome.outputTail, OUTPUT_TAIL_MAX_BYTES),
    outputTruncated: outcome.outputTruncated,
    error: outcome.error?.slice(0, RESULT_ERROR_MAX_LENGTH),
    data: outcome.data,
    startedAt: startedAtMs === undefined ? undefined : new Date(startedAtMs).toISOString(),
    endedAt: new Date(endedAtMs).toISOString(),
    async: outcome.async === true ? true : undefined,
    printedNothing,
    output,
  };
  // The hand-written check accepts what zod would, without zod's cost per job; zod decides
  // (and names the problem of) anything else.
  const candidate = stripUndefined(full);
  const accepted = acceptResultItem(candidate);
  if (accepted !== undefined) return accepted;
  const parsed = resultItemSchema.safeParse(candidate);
  if (parsed.success) return parsed.data;
  return {
    executionId: item.executionId,
    instanceId: item.instanceId,
    outcome: outcome.async === true ? 'SUCCESS' : outcome.outcome,
    async: outcome.async === true ? true : undefined,
    exitCode: Number.isInteger(outcome.exitCode) ? outcome.exitCode : null,
    error: `result trimmed: ${parsed.error.issues[0]?.message ?? 'invalid'}`.slice(0, RESULT_ERROR_MAX_LENGTH),
    endedAt: new Date(endedAtMs).toISOString(),
    printedNothing,
    output,
  };
}

/** A refusal item. */
export function refusalItem(item: Pick<DispatchItem, 'executionId' | 'instanceId'>, reason: RefusalReason, atMs: number, detail?: string): Record<string, unknown> {
  return refusalItemSchema.parse(
    stripUndefined({ executionId: item.executionId, instanceId: item.instanceId, reason, at: new Date(atMs).toISOString(), detail: detail?.slice(0, REFUSAL_DETAIL_MAX_LENGTH) }),
  );
}

function capBytes(text: string, bytes: number): string {
  const buf = Buffer.from(text, 'utf8');
  if (buf.length <= bytes) return text;
  let start = buf.length - bytes;
  while (start < buf.length && ((buf[start] ?? 0) & 0xc0) === 0x80) start++;
  return buf.subarray(start).toString('utf8');
}

function stripUndefined<T extends Record<string, unknown>>(value: T): T {
  // A plain loop: this runs once per job, and entries/filter/fromEntries allocate three arrays.
  const out: Record<string, unknown> = {};
  for (const key in value) if (value[key] !== undefined) out[key] = value[key];
  return out as T;
}

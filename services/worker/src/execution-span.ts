/**
 * The worker's span of one attempt (#48): `ax.execute`, a child of the broker's dispatch span
 * (the item's `traceparent`), from the job's start to its end. An HTTP executor's call is its
 * child (executors/http.ts). Made only when tracing is on.
 */
import type { DispatchItem } from '@ax/core';
import type { AxSpan, AxTracer } from '@ax/kit';
import type { ExecutionOutcome } from './executors/types.js';

export function startExecutionSpan(tracer: AxTracer, item: DispatchItem, startMs: number): AxSpan {
  return tracer.startSpan('ax.execute', {
    parent: item.traceparent ?? null,
    kind: 'consumer',
    startTime: startMs,
    attributes: {
      'ax.task.name': item.taskName,
      'ax.instance.id': item.instanceId,
      'ax.execution.id': item.executionId,
      'ax.attempt': item.attempt,
      'ax.exec.type': item.exec.type,
      ...(item.shardIndex === undefined ? {} : { 'ax.shard.index': item.shardIndex }),
    },
  });
}

export function endExecutionSpan(span: AxSpan, outcome: ExecutionOutcome, endMs: number): void {
  span.setAttributes({ 'ax.outcome': outcome.outcome, ...(typeof outcome.exitCode === 'number' ? { 'ax.exit_code': outcome.exitCode } : {}) });
  if (outcome.outcome !== 'SUCCESS') span.fail(outcome.error ?? outcome.outcome);
  span.end(endMs);
}

/**
 * The broker's spans of a run (#48): `ax.claim` (the claim transaction that chose a worker for
 * it) as a child of the run's context stored on the instance, and `ax.dispatch` (the publish to
 * the worker) as a child of the claim; the dispatch item carries the dispatch span's
 * `traceparent`, which the worker's execution span continues. With tracing off the spans are
 * pass-through contexts (kit's NOOP_TRACER) and cost an object each.
 */
import { traceIdOf, type AxSpan, type AxTracer } from '@ax/kit';
import type { ClaimedInstance } from '@ax/store';

/** One claim span per dispatched instance (a broadcast instance's shards share theirs). */
export interface ClaimSpans {
  /** Instance id → its claim span. */
  readonly spans: ReadonlyMap<string, AxSpan>;
  /**
   * Instance id → the `traceparent` to store on instances that had none (a manual run, a rerun,
   * a row from before migration 0017): their claim span starts the run's trace.
   */
  readonly missing: ReadonlyMap<string, string>;
}

/** Starts the claim spans of `instances` (the claim began at `startMs`, epoch ms). */
export function startClaimSpans(tracer: AxTracer, instances: Iterable<{ instance: ClaimedInstance; worker: { id: string } }>, startMs: number): ClaimSpans {
  const spans = new Map<string, AxSpan>();
  const missing = new Map<string, string>();
  for (const { instance, worker } of instances) {
    if (spans.has(instance.id)) continue;
    const span = tracer.startSpan('ax.claim', {
      parent: instance.traceParent,
      startTime: startMs,
      attributes: { 'ax.task.name': instance.taskName, 'ax.instance.id': instance.id, 'ax.attempt': instance.attempt, 'ax.worker.id': worker.id },
    });
    spans.set(instance.id, span);
    if (instance.traceParent === null) missing.set(instance.id, span.traceparent);
  }
  return { spans, missing };
}

/** Starts the dispatch span of one item: child of `parent` (its claim span, or the run's context). */
export function startDispatchSpan(tracer: AxTracer, parent: string | null, item: { executionId: string; workerId: string; attempt: number; shardIndex?: number | undefined }): AxSpan {
  return tracer.startSpan('ax.dispatch', {
    parent,
    kind: 'producer',
    attributes: {
      'ax.execution.id': item.executionId,
      'ax.worker.id': item.workerId,
      'ax.attempt': item.attempt,
      ...(item.shardIndex === undefined ? {} : { 'ax.shard.index': item.shardIndex }),
    },
  });
}

/** The `traceId` logs carry for a dispatch: the OpenTelemetry trace id, or `fallback` (no valid context). */
export function logTraceId(traceparent: string, fallback: string): string {
  return traceIdOf(traceparent) ?? fallback;
}

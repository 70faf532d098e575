/**
 * The `TRACEPARENT` a process job (shell, python) gets (#48): the W3C context its own tools continue,
 * as an HTTP job's service continues the `traceparent` header. With tracing on it is the worker's
 * `ax.execute` span, so the job's spans nest under the attempt; with it off, the run's context the
 * dispatch item carries (the run's trace id, `AX_TRACE_ID`), so a job that exports spans itself still
 * lands in the run's trace. Environment variables cost nothing, unlike a header's span: hence the
 * variable with tracing off too. Normalized to version 00; nothing when no valid context.
 */
import { formatTraceparent, parseTraceparent } from '@ax/kit';
import type { ExecutionRequest } from './types.js';

export function jobTraceparent(request: Pick<ExecutionRequest, 'item' | 'traceparent'>): string | null {
  const context = parseTraceparent(request.traceparent) ?? parseTraceparent(request.item.traceparent);
  return context === null ? null : formatTraceparent(context);
}

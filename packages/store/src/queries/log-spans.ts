/**
 * Pure arithmetic of job output (no I/O): which byte ranges of a stream are stored, how far it
 * can be read without a hole, whether all of it is there, and how stored chunks (which may
 * overlap after a redelivery cut differently) assemble into one page of bytes.
 *
 * Positions are true byte positions (`@ax/core` messages/log.ts): output dropped past
 * `AX_LOG_MAX_BYTES` leaves a gap, never a shift. A gap is either pending (a chunk still on its
 * way, out of order) or, once the end marker says the output was truncated and every byte the
 * worker kept is stored, permanent (the dropped middle): only a permanent gap is skipped.
 */
import { LOG_TAIL_KEPT_BYTES } from '@ax/core';

/** A stored chunk's place: `[start, start + len)`. */
export interface LogSpan {
  readonly start: number;
  readonly len: number;
}

/** A run of stored bytes `[start, end)`. */
export interface LogRun {
  readonly start: number;
  readonly end: number;
}

/** Merges spans (any order, overlaps allowed) into disjoint runs, ascending. */
export function mergeSpans(spans: Iterable<LogSpan>): LogRun[] {
  const sorted = [...spans].filter((s) => s.len > 0).sort((a, b) => a.start - b.start);
  const runs: Array<{ start: number; end: number }> = [];
  for (const s of sorted) {
    const last = runs.at(-1);
    const end = s.start + s.len;
    if (last !== undefined && s.start <= last.end) last.end = Math.max(last.end, end);
    else runs.push({ start: s.start, end });
  }
  return runs;
}

/** Bytes covered by `runs`. */
export function storedBytes(runs: readonly LogRun[]): number {
  return runs.reduce((sum, r) => sum + (r.end - r.start), 0);
}

/** End of the run that starts at 0 (0 when byte 0 is not stored yet): what is readable without a hole. */
export function contiguousEnd(runs: readonly LogRun[]): number {
  const first = runs[0];
  return first !== undefined && first.start === 0 ? first.end : 0;
}

/**
 * Whether a stream of which the job wrote `total` bytes is stored entirely: `[0, total)` when
 * nothing was dropped; when `truncated`, a head `[0, h)` (possibly empty) and a tail ending at
 * `total` that holds at least the last 64 KiB (or all of it), with at most one gap between.
 */
export function streamComplete(runs: readonly LogRun[], total: number, truncated: boolean): boolean {
  if (total === 0) return runs.length === 0;
  const last = runs.at(-1);
  if (last === undefined || last.end !== total) return false;
  if (runs.length === 1) return last.start === 0 || (truncated && last.start <= Math.max(0, total - LOG_TAIL_KEPT_BYTES));
  if (!truncated || runs.length > 2) return false;
  return (runs[0] as LogRun).start === 0 && last.start <= Math.max(0, total - LOG_TAIL_KEPT_BYTES);
}

/** A stored chunk with its bytes, at `start` in the coordinates being read. */
export interface LogPiece<S extends string = string> {
  readonly start: number;
  readonly data: Buffer;
  /** The stream the bytes came from (for `all`, each piece's own). */
  readonly stream: S;
}

/** One assembled page. */
export interface AssembledPage<S extends string = string> {
  /** The bytes read, in order, without overlaps; pieces keep their stream. */
  readonly pieces: ReadonlyArray<LogPiece<S>>;
  /** Position of the first byte returned (`from`, or past a permanent gap). */
  readonly start: number;
  /** Where the next page starts: past the last byte returned (or past a skipped gap). */
  readonly next: number;
  readonly bytes: number;
}

/**
 * Cuts `[from, from + limit)` out of chunks sorted by start (overlaps allowed). Stops at the
 * first hole unless `skipGaps` (a sealed, truncated output whose holes are the dropped bytes).
 */
export function assemblePage<S extends string>(chunks: ReadonlyArray<LogPiece<S>>, from: number, limit: number, skipGaps: boolean): AssembledPage<S> {
  const to = from + limit;
  const pieces: Array<LogPiece<S>> = [];
  let pos = from;
  let start: number | undefined;
  let bytes = 0;
  for (const c of chunks) {
    if (pos >= to) break;
    const end = c.start + c.data.length;
    if (end <= pos) continue;
    if (c.start > pos) {
      if (!skipGaps) break;
      pos = c.start; // past the dropped bytes
      if (pos >= to) break;
    }
    const upTo = Math.min(end, to);
    const data = c.data.subarray(pos - c.start, upTo - c.start);
    start ??= pos;
    pieces.push({ start: pos, data, stream: c.stream });
    bytes += data.length;
    pos = upTo;
  }
  return { pieces, start: start ?? from, next: pos, bytes };
}

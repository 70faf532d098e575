/** Reads `log` items back the way the store would (tests only). */
import type { LogChunkItem, LogEndItem, LogItem, LogStream } from '@ax/core';

/** One execution's output as reassembled from its chunks. */
export interface Reassembled {
  readonly chunks: LogChunkItem[];
  readonly ends: LogEndItem[];
  /** Each stream's bytes by offset; a gap (truncation) is left out, its position listed in `gaps`. */
  readonly streams: Record<LogStream, Buffer>;
  readonly gaps: Record<LogStream, Array<{ from: number; to: number }>>;
}

/**
 * Reassembles an execution's streams from its chunks (duplicates by offset ignored, as the
 * store does) and checks that no two chunks of a stream overlap with different bytes.
 */
export function reassemble(items: readonly LogItem[], executionId: string): Reassembled {
  const mine = items.filter((i) => i.executionId === executionId);
  const chunks = mine.filter((i): i is LogChunkItem => i.part === 'chunk');
  const ends = mine.filter((i): i is LogEndItem => i.part === 'end');
  const streams = {} as Record<LogStream, Buffer>;
  const gaps = { stdout: [], stderr: [] } as Record<LogStream, Array<{ from: number; to: number }>>;
  for (const stream of ['stdout', 'stderr'] as const) {
    const byOffset = new Map<number, Buffer>();
    for (const c of chunks) {
      if (c.stream !== stream) continue;
      const data = Buffer.from(c.data, 'base64');
      const seen = byOffset.get(c.offset);
      if (seen !== undefined && !seen.equals(data)) throw new Error(`${stream} chunk at ${c.offset} sent twice with different bytes`);
      byOffset.set(c.offset, data);
    }
    const parts: Buffer[] = [];
    let at = 0;
    for (const offset of [...byOffset.keys()].sort((a, b) => a - b)) {
      const data = byOffset.get(offset) ?? Buffer.alloc(0);
      if (offset < at) throw new Error(`${stream} chunks overlap at ${offset}`);
      if (offset > at) gaps[stream].push({ from: at, to: offset });
      parts.push(data);
      at = offset + data.length;
    }
    streams[stream] = Buffer.concat(parts);
  }
  return { chunks, ends, streams, gaps };
}

/**
 * Checks `allOffset`: distinct chunks never overlap in the both-streams numbering, and within a
 * stream they are in the same order by `allOffset` as by `offset`. Returns the problems.
 */
export function allOffsetProblems(chunks: readonly LogChunkItem[]): string[] {
  const unique = new Map<string, LogChunkItem>();
  for (const c of chunks) unique.set(`${c.stream}:${c.offset}`, c);
  const sorted = [...unique.values()].sort((a, b) => a.allOffset - b.allOffset);
  const problems: string[] = [];
  let end = 0;
  const last: Partial<Record<LogStream, number>> = {};
  for (const c of sorted) {
    const length = Buffer.from(c.data, 'base64').length;
    if (c.allOffset < end) problems.push(`${c.stream}@${c.offset} starts at all ${c.allOffset}, before the previous chunk ended (${end})`);
    end = c.allOffset + length;
    const prev = last[c.stream];
    if (prev !== undefined && c.offset < prev) problems.push(`${c.stream}@${c.offset} comes after ${prev} in allOffset order`);
    last[c.stream] = c.offset + length;
  }
  return problems;
}

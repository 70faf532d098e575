import { describe, expect, it } from 'vitest';
import { addSegment, findMatches, toLines, utf8Edges } from './log-text';
import { createSseParser, type SseEvent } from './sse';

describe('log text', () => {
  it('splits pieces into numbered lines across piece edges, with a mark for a hole', () => {
    let segments = addSegment([], { start: 6, end: 14, text: 'two\nthre' });
    segments = addSegment(segments, { start: 0, end: 6, text: 'one\nt' });
    segments = addSegment(segments, { start: 14, end: 16, text: 'e\n' });
    segments = addSegment(segments, { start: 14, end: 16, text: 'e\n' }); // redelivered: held already
    segments = addSegment(segments, { start: 116, end: 120, text: 'end\n' });
    expect(toLines(segments)).toEqual([
      { kind: 'text', n: 1, text: 'one' },
      { kind: 'text', n: 2, text: 'ttwo' },
      { kind: 'text', n: 3, text: 'three' },
      { kind: 'gap', bytes: 100 },
      { kind: 'text', n: 4, text: 'end' },
    ]);
    expect(toLines([{ start: 0, end: 3, text: 'a\nb' }])).toEqual([
      { kind: 'text', n: 1, text: 'a' },
      { kind: 'text', n: 2, text: 'b' },
    ]);
  });

  it('finds every hit, case-insensitively, by line and column', () => {
    const lines = toLines([{ start: 0, end: 20, text: 'Tick 1\nno\ntick tick\n' }]);
    expect(findMatches(lines, 'tick')).toEqual([
      { line: 0, column: 0 },
      { line: 2, column: 0 },
      { line: 2, column: 5 },
    ]);
    expect(findMatches(lines, '')).toEqual([]);
  });

  it('finds the characters cut at the edges of a page of UTF-8', () => {
    const bytes = new TextEncoder().encode('é€x€'); // c3 a9 | e2 82 ac | 78 | e2 82 ac
    expect(utf8Edges(bytes)).toEqual({ head: 0, tail: 0 });
    expect(utf8Edges(bytes.subarray(1))).toEqual({ head: 1, tail: 0 });
    expect(utf8Edges(bytes.subarray(0, bytes.length - 1))).toEqual({ head: 0, tail: 2 });
    expect(utf8Edges(bytes.subarray(3, 4))).toEqual({ head: 1, tail: 0 });
  });
});

describe('SSE parser', () => {
  it('gives each event once, whatever the split, with its id and event name; comments are skipped', () => {
    const text = 'retry: 2000\n\n: ping\n\nid: 6\nevent: chunk\ndata: {"a":1}\n\nid: 9\r\nevent: chunk\r\ndata: x\r\ndata: y\r\n\r\nevent: end\ndata: {}\n\n';
    for (const size of [1, 2, 7, text.length]) {
      const events: SseEvent[] = [];
      const parser = createSseParser((e) => events.push(e));
      for (let at = 0; at < text.length; at += size) parser.feed(text.slice(at, at + size));
      expect(events).toEqual([
        { event: 'chunk', data: '{"a":1}', id: '6' },
        { event: 'chunk', data: 'x\ny', id: '9' },
        { event: 'end', data: '{}', id: '9' },
      ]);
    }
  });
});

/** The SSE parser: events split anywhere, the three line endings, comments, multi-line data, ids. */
import { describe, expect, it } from 'vitest';
import { SseParser } from './sse.js';

const STREAM = 'retry: 2000\n\nid: 7\nevent: chunk\ndata: {"stream":"stdout","offset":0,"text":"hi\\n"}\n\n: ping\n\nevent: end\ndata: {"size":7}\n\n';

describe('SseParser', () => {
  it('answers the same events however the text is cut', () => {
    const whole = new SseParser().push(STREAM);
    expect(whole).toEqual([
      { event: 'chunk', data: '{"stream":"stdout","offset":0,"text":"hi\\n"}', id: '7' },
      { event: 'end', data: '{"size":7}', id: '7' },
    ]);
    for (let cut = 1; cut < STREAM.length; cut++) {
      const p = new SseParser();
      expect([...p.push(STREAM.slice(0, cut)), ...p.push(STREAM.slice(cut))], `cut at ${cut}`).toEqual(whole);
    }
  });

  it('takes CR LF and CR line ends, joins data lines, ignores comments, and needs data to dispatch', () => {
    const p = new SseParser();
    expect(p.push('id: 1\r\nevent: a\r\ndata: x\r\ndata: y\r\n\r\n: c\r\revent: nodata\r\r')).toEqual([{ event: 'a', data: 'x\ny', id: '1' }]);
    // a CR at the end waits: it may be half of CR LF
    expect(p.push('data:z\r')).toEqual([]);
    expect(p.push('\n\n')).toEqual([{ event: 'message', data: 'z', id: '1' }]);
    expect(p.lastId).toBe('1');
  });
});

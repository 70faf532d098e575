/**
 * A Server-Sent Events parser (the WHATWG "event stream" format, pure): text in, whole events
 * out. Lines end with LF, CR LF or CR; `:` lines are comments (the admin API's `: ping`);
 * `data` lines of one event are joined with LF; an event is dispatched at a blank line, and
 * an event without data is not one (as in EventSource). `id` is remembered across events.
 */

/** One dispatched event. */
export interface SseEvent {
  /** `event:` field; `message` when none. */
  readonly event: string;
  readonly data: string;
  /** The last event id seen so far (this event's or an earlier one's); undefined if none. */
  readonly id: string | undefined;
}

/** Feeds text as it arrives; answers the events completed by it. */
export class SseParser {
  private buffer = '';
  private event = '';
  private data: string[] = [];
  private hasData = false;
  /** The last event id (EventSource's "last event ID"). */
  lastId: string | undefined;

  push(text: string): SseEvent[] {
    this.buffer += text;
    const out: SseEvent[] = [];
    for (;;) {
      const m = /\r\n|\r|\n/.exec(this.buffer);
      if (m === null) break;
      // a CR at the very end may be the first half of CR LF: wait for the next text
      if (m[0] === '\r' && m.index === this.buffer.length - 1) break;
      const line = this.buffer.slice(0, m.index);
      this.buffer = this.buffer.slice(m.index + m[0].length);
      const done = this.line(line);
      if (done !== undefined) out.push(done);
    }
    return out;
  }

  private line(line: string): SseEvent | undefined {
    if (line === '') {
      const ready = this.hasData ? { event: this.event === '' ? 'message' : this.event, data: this.data.join('\n'), id: this.lastId } : undefined;
      this.event = '';
      this.data = [];
      this.hasData = false;
      return ready;
    }
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.event = value;
    else if (field === 'data') {
      this.data.push(value);
      this.hasData = true;
    } else if (field === 'id' && !value.includes('\0')) this.lastId = value;
    return undefined;
  }
}

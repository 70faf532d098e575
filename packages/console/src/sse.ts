/**
 * Server-Sent Events read through `fetch` (the admin API wants the token in the
 * `Authorization` header, which `EventSource` cannot send). The parser is pure: text in, events
 * out, in any split (https://html.spec.whatwg.org/multipage/server-sent-events.html).
 */

/** One dispatched event. */
export interface SseEvent {
  /** `event:` (default `message`). */
  event: string;
  /** The `data:` lines joined by `\n`. */
  data: string;
  /** The last `id:` seen so far (it carries over to later events), or null. */
  id: string | null;
}

/** A parser fed with decoded text in arbitrary pieces; calls `onEvent` per complete event. */
export function createSseParser(onEvent: (event: SseEvent) => void): { feed: (text: string) => void } {
  let buffer = '';
  let event = '';
  let data: string[] = [];
  let id: string | null = null;
  const line = (text: string): void => {
    if (text === '') {
      if (data.length > 0) onEvent({ event: event === '' ? 'message' : event, data: data.join('\n'), id });
      event = '';
      data = [];
      return;
    }
    if (text.startsWith(':')) return; // a comment (`: ping`)
    const colon = text.indexOf(':');
    const field = colon < 0 ? text : text.slice(0, colon);
    let value = colon < 0 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
    else if (field === 'id' && !value.includes('\0')) id = value;
    // `retry:` and unknown fields: ignored (the caller reconnects on its own schedule)
  };
  return {
    feed: (text: string) => {
      buffer += text;
      for (;;) {
        const match = /\r\n|\r|\n/.exec(buffer);
        // a lone `\r` at the very end may be the first half of `\r\n`: wait for more
        if (match === null || (match[0] === '\r' && match.index === buffer.length - 1)) return;
        line(buffer.slice(0, match.index));
        buffer = buffer.slice(match.index + match[0].length);
      }
    },
  };
}

/** Reads an event-stream response to its end (or until `signal` aborts), calling `onEvent`. */
export async function readSse(response: Response, onEvent: (event: SseEvent) => void): Promise<void> {
  if (response.body === null) return;
  const reader = response.body.getReader();
  const decoder = new TextDecoder('utf-8');
  const parser = createSseParser(onEvent);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parser.feed(decoder.decode(value, { stream: true }));
    }
    parser.feed(decoder.decode());
  } finally {
    reader.releaseLock();
  }
}

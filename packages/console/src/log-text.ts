/**
 * The text of a log as the viewer holds it (pure): pieces of the view with their byte
 * positions, split into numbered lines; UTF-8 cuts at page edges; search over the lines.
 */

/** Bytes `[start, end)` of the view, decoded. Pieces are kept in order; a hole between two is dropped output. */
export interface LogSegment {
  readonly start: number;
  readonly end: number;
  readonly text: string;
}

/** One line to show: numbered text, or the mark of a hole (bytes a truncated output dropped). */
export type LogLine = { kind: 'text'; n: number; text: string } | { kind: 'gap'; bytes: number };

/**
 * How many bytes at the head of `bytes` continue a character that began before it, and how
 * many at its tail begin one that ends after it: a page is shown from the first whole
 * character to the last, so no U+FFFD appears at its edges.
 */
export function utf8Edges(bytes: Uint8Array): { head: number; tail: number } {
  let head = 0;
  while (head < 3 && head < bytes.length && ((bytes[head] ?? 0) & 0xc0) === 0x80) head++;
  let tail = 0;
  for (let back = 1; back <= 3 && back <= bytes.length - head; back++) {
    const b = bytes[bytes.length - back] ?? 0;
    if ((b & 0xc0) === 0x80) continue; // a continuation byte: look further back
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    if (need > back) tail = back;
    break;
  }
  return { head, tail };
}

/** Inserts `segment` in order (dropping one that is already held), so live chunks and pages mix. */
export function addSegment(segments: readonly LogSegment[], segment: LogSegment): LogSegment[] {
  if (segments.some((s) => segment.start < s.end && s.start < segment.end)) return [...segments]; // overlap: held already
  const out = [...segments, segment];
  out.sort((a, b) => a.start - b.start);
  return out;
}

/**
 * The lines of the segments. `firstLine` is the number of the first line (1 when the text starts
 * at byte 0). A final line ending in `\n` leaves no empty line after it.
 */
export function toLines(segments: readonly LogSegment[], firstLine = 1): LogLine[] {
  const lines: LogLine[] = [];
  let n = firstLine;
  let partial: string | null = null;
  let position: number | null = null;
  for (const s of segments) {
    if (position !== null && s.start > position) {
      if (partial !== null && partial !== '') lines.push({ kind: 'text', n: n++, text: partial });
      partial = null;
      lines.push({ kind: 'gap', bytes: s.start - position });
    }
    position = s.end;
    if (s.text === '') continue;
    const parts = s.text.split('\n');
    parts[0] = (partial ?? '') + (parts[0] ?? '');
    partial = parts.pop() ?? '';
    for (const text of parts) lines.push({ kind: 'text', n: n++, text: text.endsWith('\r') ? text.slice(0, -1) : text });
  }
  if (partial !== null && partial !== '') lines.push({ kind: 'text', n, text: partial });
  return lines;
}

/** One place a search term occurs: the index of its line in `lines` and its column. */
export interface LogMatch {
  readonly line: number;
  readonly column: number;
}

/** Every occurrence of `term` (case-insensitive) in the text lines; none for an empty term. */
export function findMatches(lines: readonly LogLine[], term: string, max = 10_000): LogMatch[] {
  const needle = term.toLowerCase();
  if (needle === '') return [];
  const out: LogMatch[] = [];
  lines.forEach((line, index) => {
    if (line.kind !== 'text') return;
    const hay = line.text.toLowerCase();
    for (let at = hay.indexOf(needle); at >= 0 && out.length < max; at = hay.indexOf(needle, at + needle.length)) out.push({ line: index, column: at });
  });
  return out;
}

/**
 * Masks secret values in a byte stream that arrives in pieces (a job's stdout or stderr), before
 * any of it leaves the worker. Pure: no I/O.
 *
 * Works on bytes, not text: output need not be UTF-8 and is kept byte for byte, and a value
 * (UTF-8 encoded) is found whatever surrounds it. A value split across two pieces is caught by
 * holding back the end of each piece that could be the start of a value — only as many bytes as
 * actually match the beginning of some value, so ordinary output ("line 5\n") is never held and
 * a line is shipped as soon as it is printed. `end()` releases what is held (an unfinished value
 * is not a value).
 *
 * Occurrences are replaced leftmost first, the longest value at a tie; a value that overlaps an
 * earlier, already masked one is not masked again (the rules of `executors/secret-mask.ts`,
 * whose `patterns` this takes: values, their lines and their JSON-escaped forms).
 */
import { MASK } from '../executors/secret-mask.js';

const MASK_BYTES = Buffer.from(MASK, 'utf8');
const NOTHING = Buffer.alloc(0);

/** The masking state of one stream of one attempt. */
export class StreamMask {
  private readonly patterns: readonly Buffer[];
  private held: Buffer = NOTHING;

  /** @param patterns what to mask (`SecretMask.patterns`); an empty list masks nothing. */
  constructor(patterns: readonly string[]) {
    this.patterns = patterns
      .map((p) => Buffer.from(p, 'utf8'))
      .filter((p) => p.length > 0)
      .sort((a, b) => b.length - a.length);
  }

  /** Bytes that are safe to ship now (masked); may be empty while a possible value is held. */
  push(data: Buffer): Buffer {
    const buf = this.held.length === 0 ? data : Buffer.concat([this.held, data]);
    const { out, keep } = this.scan(buf, false);
    // A copy: the piece held must not pin the (possibly large) buffer it came from.
    this.held = keep === 0 ? NOTHING : Buffer.from(buf.subarray(buf.length - keep));
    return out;
  }

  /** The bytes still held, masked (the stream ended). */
  end(): Buffer {
    const { out } = this.scan(this.held, true);
    this.held = NOTHING;
    return out;
  }

  /** Bytes held back (for tests). */
  get heldBytes(): number {
    return this.held.length;
  }

  private scan(buf: Buffer, final: boolean): { out: Buffer; keep: number } {
    const { patterns } = this;
    if (patterns.length === 0 || buf.length === 0) return { out: buf, keep: 0 };
    const next = patterns.map((p) => buf.indexOf(p));
    const parts: Buffer[] = [];
    let pos = 0;
    for (;;) {
      let at = -1;
      let which = -1;
      for (let i = 0; i < next.length; i++) {
        const n = next[i] ?? -1;
        if (n >= 0 && (at < 0 || n < at)) {
          at = n;
          which = i;
        }
      }
      if (at < 0) break;
      if (at > pos) parts.push(buf.subarray(pos, at));
      parts.push(MASK_BYTES);
      pos = at + (patterns[which]?.length ?? 0);
      for (let i = 0; i < next.length; i++) {
        const n = next[i] ?? -1;
        if (n >= 0 && n < pos) next[i] = buf.indexOf(patterns[i] ?? NOTHING, pos);
      }
    }
    const keep = final ? 0 : this.possibleStart(buf, pos);
    if (buf.length - keep > pos) parts.push(buf.subarray(pos, buf.length - keep));
    const out = parts.length === 0 ? NOTHING : parts.length === 1 ? (parts[0] ?? NOTHING) : Buffer.concat(parts);
    return { out, keep };
  }

  /** Length of the longest end of `buf` (after `from`) that is the beginning of some value. */
  private possibleStart(buf: Buffer, from: number): number {
    let longest = 0;
    for (const pattern of this.patterns) {
      const window = Math.min(pattern.length - 1, buf.length - from);
      if (window <= longest) continue;
      const first = pattern[0] ?? 0;
      // Candidates are the positions holding the value's first byte; the earliest that matches wins.
      for (let j = buf.indexOf(first, buf.length - window); j >= 0 && buf.length - j > longest; j = buf.indexOf(first, j + 1)) {
        if (buf.compare(pattern, 0, buf.length - j, j) === 0) {
          longest = buf.length - j;
          break;
        }
      }
    }
    return longest;
  }
}

/** A bounded tail of a job's output (stdout and stderr interleaved), truncation marked. */
import { NO_SECRETS, type SecretMask } from './secret-mask.js';

/** Cuts UTF-8 text to its last `limitBytes` bytes, never starting inside a character. */
function lastBytes(buf: Buffer, limitBytes: number): string {
  const kept = buf.length > limitBytes ? buf.subarray(buf.length - limitBytes) : buf;
  let start = 0;
  // Skip continuation bytes (10xxxxxx) of a character cut at the front.
  while (start < kept.length && start < 4 && ((kept[start] ?? 0) & 0xc0) === 0x80) start++;
  return kept.subarray(start).toString('utf8');
}

/** The tail of one run's output. */
export class OutputTail {
  private chunks: Buffer[] = [];
  private size = 0;
  private total = 0;

  /** @param limitBytes bytes kept (AX_OUTPUT_TAIL_BYTES, at most 64 KiB in a result). */
  constructor(private readonly limitBytes: number) {}

  push(chunk: Buffer): void {
    this.total += chunk.length;
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size - (this.chunks[0]?.length ?? 0) >= this.limitBytes && this.chunks.length > 1) {
      this.size -= this.chunks.shift()?.length ?? 0;
    }
  }

  /** True when output was dropped. */
  get truncated(): boolean {
    return this.total > this.limitBytes;
  }

  /**
   * The last `limitBytes` bytes as UTF-8, never starting inside a multi-byte character, with
   * the run's secret values masked. Masking happens on everything still held (at least
   * `limitBytes`, usually more) BEFORE the cut to the limit, so a value the cut would split is
   * masked whole; only a value whose start was already dropped can begin the held text, and
   * `mask.tail` masks that piece.
   */
  text(mask: SecretMask = NO_SECRETS): string {
    const held = Buffer.concat(this.chunks);
    if (mask.empty) return lastBytes(held, this.limitBytes);
    const whole = lastBytes(held, held.length); // all held text, decoded from a character start
    return lastBytes(Buffer.from(mask.tail(whole, this.total > held.length), 'utf8'), this.limitBytes);
  }
}

/** A bounded tail of a job's output (stdout and stderr interleaved), truncation marked. */
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

  /** The last `limitBytes` bytes as UTF-8, never starting inside a multi-byte character. */
  text(): string {
    let buf = Buffer.concat(this.chunks);
    if (buf.length > this.limitBytes) buf = buf.subarray(buf.length - this.limitBytes);
    let start = 0;
    // Skip continuation bytes (10xxxxxx) of a character cut at the front.
    while (start < buf.length && start < 4 && ((buf[start] ?? 0) & 0xc0) === 0x80) start++;
    return buf.subarray(start).toString('utf8');
  }
}

/**
 * UUIDv7 (RFC 9562): 48-bit Unix milliseconds, version 7, 12 bits of a per-process sequence
 * (monotonic within one millisecond), variant 10, 62 random bits. Execution ids sort by
 * creation time, which keeps the unique index on `execution_id` append-mostly.
 */
import { randomBytes } from 'node:crypto';

let lastMs = -1;
let sequence = 0;

/** A new UUIDv7 string, e.g. `01939b4e-3c7a-7d41-9a0e-5b1c2d3e4f60`. */
export function uuidv7(nowMs: number = Date.now()): string {
  let ms = Math.max(nowMs, lastMs);
  if (ms === lastMs) {
    sequence = (sequence + 1) & 0xfff;
    if (sequence === 0) ms = lastMs + 1; // 4096 ids in one ms: borrow the next millisecond
  } else {
    sequence = randomBytes(2).readUInt16BE(0) & 0x7ff; // random start, room to count up
  }
  lastMs = ms;
  const bytes = randomBytes(16);
  bytes.writeUIntBE(ms, 0, 6);
  bytes[6] = 0x70 | ((sequence >> 8) & 0x0f);
  bytes[7] = sequence & 0xff;
  bytes[8] = 0x80 | ((bytes[8] ?? 0) & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

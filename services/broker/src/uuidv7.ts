/**
 * UUIDv7 (RFC 9562): 48-bit Unix milliseconds, version 7, 12 bits of a per-process sequence
 * (monotonic within one millisecond), variant 10, 62 random bits. Execution ids sort by
 * creation time, which keeps the unique index on `execution_id` append-mostly.
 */
import { randomFillSync } from 'node:crypto';

let lastMs = -1;
let sequence = 0;

/**
 * Random bytes drawn from a pool refilled 4 KiB at a time (as `crypto.randomUUID` does): one
 * system RNG call per 256 ids instead of two per id.
 */
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

function randomSlice(size: number): Buffer {
  if (poolOffset + size > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const out = Buffer.from(pool.subarray(poolOffset, poolOffset + size));
  poolOffset += size;
  return out;
}

/** A new UUIDv7 string, e.g. `01939b4e-3c7a-7d41-9a0e-5b1c2d3e4f60`. */
export function uuidv7(nowMs: number = Date.now()): string {
  let ms = Math.max(nowMs, lastMs);
  if (ms === lastMs) {
    sequence = (sequence + 1) & 0xfff;
    if (sequence === 0) ms = lastMs + 1; // 4096 ids in one ms: borrow the next millisecond
  } else {
    sequence = randomSlice(2).readUInt16BE(0) & 0x7ff; // random start, room to count up
  }
  lastMs = ms;
  const bytes = randomSlice(16);
  bytes.writeUIntBE(ms, 0, 6);
  bytes[6] = 0x70 | ((sequence >> 8) & 0x0f);
  bytes[7] = sequence & 0xff;
  bytes[8] = 0x80 | ((bytes[8] ?? 0) & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

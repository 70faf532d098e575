// One attempt's output as `log` items: chunks per stream with true offsets, the cap (head and
// each stream's last 64 KiB), masking before anything is cut, and the end item.
import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { LOG_CHUNK_MAX_BYTES, LOG_TAIL_KEPT_BYTES, logItemSchema, resultOutputSchema, type LogItem } from '@ax/core';
import { secretMask } from '../executors/secret-mask.js';
import { allOffsetProblems, reassemble } from '../testing/log-items.js';
import { AttemptLog, noItems, type AttemptLogHooks, type LogItems } from './attempt-log.js';

const ids = { executionId: 'exec-1', instanceId: '42' };
const quiet: AttemptLogHooks = { onPending: () => undefined, shouldStopHead: () => false };
const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

/** Parses item texts with the catalog's schema (what the broker's consumer does). */
function parsed(items: LogItems): LogItem[] {
  return items.items.map((text) => logItemSchema.parse(JSON.parse(text)));
}

function endOf(items: LogItem[]): LogItem | undefined {
  return items.filter((i) => i.part === 'end').at(-1);
}

describe('attempt log', () => {
  it('keeps stdout and stderr apart, byte for byte, in chunks of at most 256 KiB with consistent offsets', () => {
    const log = new AttemptLog(ids, { maxBytes: 16 * 1_048_576 }, quiet);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const items = noItems();
    for (let i = 0; i < 200; i++) {
      const o = randomBytes(1 + ((i * 7919) % 20_000));
      log.write('stdout', o);
      out.push(o);
      if (i % 3 === 0) {
        const e = randomBytes(100 + i);
        log.write('stderr', e);
        err.push(e);
      }
      if (i % 50 === 0) log.takeChunks(items); // a flush while it runs
    }
    log.end(items);
    const all = parsed(items);
    const back = reassemble(all, ids.executionId);
    expect(sha(back.streams.stdout)).toBe(sha(Buffer.concat(out)));
    expect(sha(back.streams.stderr)).toBe(sha(Buffer.concat(err)));
    expect(back.gaps).toEqual({ stdout: [], stderr: [] });
    expect(back.chunks.every((c) => Buffer.from(c.data, 'base64').length <= LOG_CHUNK_MAX_BYTES)).toBe(true);
    expect(allOffsetProblems(back.chunks)).toEqual([]);
    expect(endOf(all)).toEqual({ part: 'end', ...ids, stdoutBytes: Buffer.concat(out).length, stderrBytes: Buffer.concat(err).length, truncated: false });
    expect(all.at(-1)?.part).toBe('end'); // the end comes after the last chunk
  });

  it('past maxBytes: the head, then each stream\'s last 64 KiB with their true offsets, and end.truncated', () => {
    const maxBytes = 300_000;
    const log = new AttemptLog(ids, { maxBytes }, quiet);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    for (let i = 0; i < 120; i++) {
      const o = randomBytes(10_000);
      log.write('stdout', o);
      out.push(o);
      const e = randomBytes(1_000 + (i % 5));
      log.write('stderr', e);
      err.push(e);
    }
    const items = noItems();
    log.end(items);
    const all = parsed(items);
    const back = reassemble(all, ids.executionId);
    const stdout = Buffer.concat(out);
    const stderr = Buffer.concat(err);
    // The head: the first maxBytes of both streams in capture order.
    const headChunks = back.chunks.filter((c) => c.allOffset < maxBytes);
    const headBytes = headChunks.reduce((n, c) => n + Buffer.from(c.data, 'base64').length, 0);
    expect(headBytes).toBe(maxBytes);
    // Each stream: its head part, a gap, then exactly its last 64 KiB at their true offsets.
    for (const [stream, whole] of [['stdout', stdout], ['stderr', stderr]] as const) {
      const gaps = back.gaps[stream];
      expect(gaps).toHaveLength(1);
      const gap = gaps[0]!;
      expect(gap.to).toBe(whole.length - LOG_TAIL_KEPT_BYTES);
      const kept = back.streams[stream];
      expect(sha(kept.subarray(0, gap.from))).toBe(sha(whole.subarray(0, gap.from)));
      expect(sha(kept.subarray(gap.from))).toBe(sha(whole.subarray(whole.length - LOG_TAIL_KEPT_BYTES)));
    }
    expect(allOffsetProblems(back.chunks)).toEqual([]);
    expect(endOf(all)).toEqual({ part: 'end', ...ids, stdoutBytes: stdout.length, stderrBytes: stderr.length, truncated: true });
  });

  it('a stream that never passed the cap keeps all of it, and one write straddling the cap is cut there', () => {
    const log = new AttemptLog(ids, { maxBytes: 1_000 }, quiet);
    log.write('stderr', Buffer.alloc(100, 'e'));
    log.write('stdout', Buffer.alloc(5_000, 'o'));
    const items = noItems();
    log.end(items);
    const back = reassemble(parsed(items), ids.executionId);
    expect(back.streams.stderr.length).toBe(100);
    expect(back.gaps.stderr).toEqual([]);
    // stdout: 900 bytes of head (to the cap), then all of the rest (under 64 KiB): nothing lost.
    expect(back.streams.stdout.length).toBe(5_000);
    expect(back.gaps.stdout).toEqual([]);
    expect(back.chunks.map((c) => [c.stream, c.offset, c.allOffset])).toEqual([
      ['stderr', 0, 0],
      ['stdout', 0, 100],
      ['stdout', 900, 1_000],
    ]);
    // Past the cap, but every byte fitted in the tail: shipped whole, so not truncated.
    expect(endOf(parsed(items))).toMatchObject({ truncated: false, stdoutBytes: 5_000, stderrBytes: 100 });
  });

  it('a secret split across two writes is masked before any chunk is cut; offsets count the masked stream', () => {
    const log = new AttemptLog(ids, { maxBytes: 1_000_000 }, quiet);
    log.useMask(secretMask(['hunter2-password']));
    const items = noItems();
    log.write('stdout', 'login with hunter2-pa');
    log.takeChunks(items); // a flush between the two halves
    log.write('stdout', 'ssword ok\n');
    log.end(items);
    const all = parsed(items);
    const back = reassemble(all, ids.executionId);
    expect(back.streams.stdout.toString()).toBe('login with *** ok\n');
    for (const c of back.chunks) expect(Buffer.from(c.data, 'base64').toString()).not.toContain('hunter');
    expect(endOf(all)).toMatchObject({ stdoutBytes: 'login with *** ok\n'.length, truncated: false });
  });

  it('nothing printed: only the end item; a backed-up shipper sends the job down the truncation path', () => {
    const silent = new AttemptLog(ids, { maxBytes: 1_000 }, quiet);
    const none = noItems();
    silent.end(none);
    expect(parsed(none)).toEqual([{ part: 'end', ...ids, stdoutBytes: 0, stderrBytes: 0, truncated: false }]);
    silent.end(none); // idempotent
    expect(none.items).toHaveLength(1);

    let backedUp = false;
    const log = new AttemptLog(ids, { maxBytes: 1_000_000 }, { onPending: () => undefined, shouldStopHead: () => backedUp });
    log.write('stdout', Buffer.alloc(10, 'a'));
    backedUp = true;
    log.write('stdout', Buffer.alloc(200_000, 'b'));
    const items = noItems();
    log.end(items);
    const back = reassemble(parsed(items), ids.executionId);
    expect(back.gaps.stdout).toEqual([{ from: 10, to: 200_010 - LOG_TAIL_KEPT_BYTES }]);
    expect(endOf(parsed(items))).toMatchObject({ truncated: true, stdoutBytes: 200_010 });
  });

  it('in the result (inResult): head and kept tails with true offsets, the truncation and masking as items would have them', () => {
    const log = new AttemptLog(ids, { maxBytes: 10, tailKeptBytes: 20 }, quiet);
    log.useMask(secretMask(['hunter2-password']));
    log.write('stdout', '0123456789'); // the head
    log.write('stdout', 'a'.repeat(50)); // past the cap: only the last 20 bytes are kept
    log.write('stderr', 'key hunter2-password\n');
    const items = noItems();
    log.end(items, 'inResult');
    expect(items.items).toEqual([]);
    const end = log.resultEnd;
    expect(end !== undefined && 'output' in end).toBe(true);
    const output = end !== undefined && 'output' in end ? end.output : undefined;
    expect(resultOutputSchema.parse(output)).toEqual(output);
    expect(output).toMatchObject({ stdoutBytes: 60, stderrBytes: 'key ***\n'.length, truncated: true });
    const decoded = output?.chunks.map((c) => [c.stream, c.offset, c.allOffset, Buffer.from(c.data, 'base64').toString()]);
    expect(decoded).toEqual([
      ['stdout', 0, 0, '0123456789'],
      ['stdout', 40, 40, 'a'.repeat(20)],
      ['stderr', 0, 60, 'key ***\n'],
    ]);
  });
});

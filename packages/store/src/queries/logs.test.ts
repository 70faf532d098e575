// Job output in the store (issue #19), against real MySQL/MariaDB: appends are idempotent
// (the same chunk twice, a redelivery cut differently, out-of-order arrival), pages reassemble
// each stream and `all` byte for byte, a truncated output is complete with its gap, and the
// retention purge removes output with its instances.
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import { LOG_TAIL_KEPT_BYTES, type LogStream } from '@ax/core';
import { createTestDatabase, type TestDatabase } from '@ax/testing';
import { insertExecutions } from './dispatch.js';
import { appendLogItems, logSizesOfExecutions, logViewState, readLogLayout, readLogPage, type LogView, type NewLogChunk } from './logs.js';
import { purgeLogsOfInstances } from './retention.js';

let db: TestDatabase;
let seq = 0;

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  await db?.drop();
});

const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

async function newExecution(): Promise<{ instanceId: string; executionId: string }> {
  seq += 1;
  const executionId = `exec-log-${seq}-${randomBytes(4).toString('hex')}`;
  const [r] = await db.pool.query<ResultSetHeader>(
    `INSERT INTO task_instance (task_id, task_name, expected_time, biz_date, \`trigger\`, state, due_at, params, current_execution_id)
     VALUES (1, ?, NOW(3), CURDATE(), 'manual', 'RUNNING', NOW(3), '{}', ?)`,
    [`logs-${seq}`, executionId],
  );
  const instanceId = String(r.insertId);
  await insertExecutions(db.pool, [{ executionId, instanceId, attempt: 1, runNo: 1, workerId: 'w1' }]);
  return { instanceId, executionId };
}

/** What a worker captures: interleaved writes to both streams, cut into chunks of at most `chunkBytes`. */
function capture(executionId: string, writes: ReadonlyArray<{ stream: LogStream; data: Buffer }>, chunkBytes: number) {
  const chunks: NewLogChunk[] = [];
  const pos = { stdout: 0, stderr: 0 };
  let all = 0;
  const whole = { stdout: [] as Buffer[], stderr: [] as Buffer[], all: [] as Buffer[] };
  for (const w of writes) {
    for (let i = 0; i < w.data.length; i += chunkBytes) {
      const data = w.data.subarray(i, i + chunkBytes);
      chunks.push({ executionId, stream: w.stream, offset: pos[w.stream], allOffset: all, data });
      pos[w.stream] += data.length;
      all += data.length;
    }
    whole[w.stream].push(w.data);
    whole.all.push(w.data);
  }
  return { chunks, stdout: Buffer.concat(whole.stdout), stderr: Buffer.concat(whole.stderr), all: Buffer.concat(whole.all), sizes: pos };
}

/** Reads a view page by page (as a client would, following `next`). */
async function readAll(executionId: string, view: LogView, pageBytes: number, skipGaps = false): Promise<Buffer> {
  const parts: Buffer[] = [];
  let from = 0;
  for (let guard = 0; guard < 10_000; guard++) {
    const page = await readLogPage(db.pool, executionId, view, from, pageBytes, { skipGaps });
    if (page.next === from) break;
    parts.push(page.data);
    from = page.next;
  }
  return Buffer.concat(parts);
}

function shuffled<T>(items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

describe('job output store', () => {
  it('reassembles stdout, stderr and all byte for byte through pages, whatever the arrival order', async () => {
    const { executionId } = await newExecution();
    // Text that compresses and bytes that do not (raw), not UTF-8 aligned.
    const writes = Array.from({ length: 40 }, (_, i) => ({
      stream: i % 3 === 0 ? ('stderr' as const) : ('stdout' as const),
      data: i % 2 === 0 ? Buffer.from(`line ${i} `.repeat(2_000)) : randomBytes(7_000 + i),
    }));
    const cap = capture(executionId, writes, 16_384);
    for (const group of [shuffled(cap.chunks).slice(0, 30), shuffled(cap.chunks)]) await appendLogItems(db.pool, group);
    await appendLogItems(db.pool, [], [{ executionId, stdoutBytes: cap.sizes.stdout, stderrBytes: cap.sizes.stderr, truncated: false }]);

    const layout = await readLogLayout(db.pool, executionId);
    for (const view of ['stdout', 'stderr', 'all'] as const) {
      const state = logViewState(layout, view);
      expect(state.stored).toBe(true);
      expect(state.truncated).toBe(false);
      expect(state.size).toBe(cap[view].length);
      expect(state.storedBytes).toBe(cap[view].length);
      // pages of an odd size cut through chunks
      expect(sha(await readAll(executionId, view, 100_003))).toBe(sha(cap[view]));
    }
    const sizes = await logSizesOfExecutions(db.pool, [executionId]);
    expect(sizes.get(executionId)).toBe(cap.all.length);
  });

  it('the same chunk twice, or cut differently on redelivery, changes nothing', async () => {
    const { executionId } = await newExecution();
    const out = Buffer.from('0123456789'.repeat(1_000));
    const cut = (offset: number, len: number): NewLogChunk => ({ executionId, stream: 'stdout', offset, allOffset: offset, data: out.subarray(offset, offset + len) });
    await appendLogItems(db.pool, [cut(0, 3_000), cut(3_000, 3_000)]);
    const before = await db.pool.query('SELECT stream, byte_offset, byte_len, codec, HEX(data) AS d FROM job_log_chunk WHERE execution_id = ? ORDER BY byte_offset', [executionId]);
    await appendLogItems(db.pool, [cut(0, 3_000), cut(3_000, 3_000), cut(0, 1_000)]);
    const after = await db.pool.query('SELECT stream, byte_offset, byte_len, codec, HEX(data) AS d FROM job_log_chunk WHERE execution_id = ? ORDER BY byte_offset', [executionId]);
    expect(after[0]).toEqual(before[0]);
    // a worker restarted and re-cut: overlapping chunks, and a longer one at a known offset
    await appendLogItems(db.pool, [cut(3_000, 5_000), cut(1_500, 4_000), cut(8_000, 2_000), cut(7_000, 3_000)]);
    expect(sha(await readAll(executionId, 'stdout', 4_096))).toBe(sha(out));
    expect(sha(await readAll(executionId, 'all', 1_000_000))).toBe(sha(out));
    const state = logViewState(await readLogLayout(db.pool, executionId), 'stdout');
    expect(state.size).toBe(out.length);
    expect(state.stored).toBe(false); // no end marker yet
    await appendLogItems(db.pool, [], [{ executionId, stdoutBytes: out.length, stderrBytes: 0, truncated: false }]);
    await appendLogItems(db.pool, [], [{ executionId, stdoutBytes: 1, stderrBytes: 1, truncated: true }]); // a second marker does not replace the first
    const sealed = logViewState(await readLogLayout(db.pool, executionId), 'stdout');
    expect(sealed).toMatchObject({ stored: true, truncated: false, size: out.length });
  });

  it('a page stops before a chunk that has not arrived; the size is what is readable', async () => {
    const { executionId } = await newExecution();
    const out = randomBytes(3_000);
    const chunk = (offset: number, len: number): NewLogChunk => ({ executionId, stream: 'stdout', offset, allOffset: offset, data: out.subarray(offset, offset + len) });
    await appendLogItems(db.pool, [chunk(0, 1_000), chunk(2_000, 1_000)]);
    expect(logViewState(await readLogLayout(db.pool, executionId), 'stdout').size).toBe(1_000);
    const page = await readLogPage(db.pool, executionId, 'stdout', 500, 10_000);
    expect(page.data.equals(out.subarray(500, 1_000))).toBe(true);
    expect(page.next).toBe(1_000);
    expect((await readLogPage(db.pool, executionId, 'stdout', 1_000, 10_000)).data.length).toBe(0);
    await appendLogItems(db.pool, [chunk(1_000, 1_000)]);
    expect(logViewState(await readLogLayout(db.pool, executionId), 'stdout').size).toBe(3_000);
    expect((await readLogPage(db.pool, executionId, 'stdout', 1_000, 10_000)).data.equals(out.subarray(1_000))).toBe(true);
  });

  it('a truncated output is complete with its head and tails; pages skip the dropped bytes', async () => {
    const { executionId } = await newExecution();
    // The job wrote 400 KiB to stdout and 100 KiB to stderr; the worker kept a 200 KiB head
    // (stdout only) and each stream's last 64 KiB.
    const stdout = randomBytes(400 * 1_024);
    const stderr = randomBytes(100 * 1_024);
    const head = 200 * 1_024;
    const chunks: NewLogChunk[] = [];
    for (let o = 0; o < head; o += 50 * 1_024) chunks.push({ executionId, stream: 'stdout', offset: o, allOffset: o, data: stdout.subarray(o, o + 50 * 1_024) });
    // capture order: all of stdout, then all of stderr
    const outTail = stdout.length - LOG_TAIL_KEPT_BYTES;
    const errTail = stderr.length - LOG_TAIL_KEPT_BYTES;
    chunks.push({ executionId, stream: 'stdout', offset: outTail, allOffset: outTail, data: stdout.subarray(outTail) });
    chunks.push({ executionId, stream: 'stderr', offset: errTail, allOffset: stdout.length + errTail, data: stderr.subarray(errTail) });
    await appendLogItems(db.pool, chunks);
    const open = await readLogLayout(db.pool, executionId);
    expect(logViewState(open, 'stdout')).toMatchObject({ stored: false, size: head });
    expect(logViewState(open, 'stderr')).toMatchObject({ stored: false, size: 0 });
    await appendLogItems(db.pool, [], [{ executionId, stdoutBytes: stdout.length, stderrBytes: stderr.length, truncated: true }]);
    const sealed = await readLogLayout(db.pool, executionId);
    expect(logViewState(sealed, 'stdout')).toMatchObject({ stored: true, truncated: true, size: stdout.length, storedBytes: head + LOG_TAIL_KEPT_BYTES });
    expect(logViewState(sealed, 'stderr')).toMatchObject({ stored: true, truncated: true, size: stderr.length });
    expect(logViewState(sealed, 'all').size).toBe(stdout.length + stderr.length);
    const keptOut = Buffer.concat([stdout.subarray(0, head), stdout.subarray(outTail)]);
    expect(sha(await readAll(executionId, 'stdout', 64_000, true))).toBe(sha(keptOut));
    expect(sha(await readAll(executionId, 'stderr', 64_000, true))).toBe(sha(stderr.subarray(errTail)));
    expect(sha(await readAll(executionId, 'all', 1_000_000, true))).toBe(sha(Buffer.concat([keptOut, stderr.subarray(errTail)])));
    // a page that starts in the dropped bytes begins at the tail
    const inGap = await readLogPage(db.pool, executionId, 'stdout', head + 10, 1_000, { skipGaps: true });
    expect(inGap.start).toBe(outTail);
    expect(inGap.data.equals(stdout.subarray(outTail, outTail + 1_000))).toBe(true);
    // without the tail it is not complete
    await db.pool.query('DELETE FROM job_log_chunk WHERE execution_id = ? AND stream = ? AND byte_offset = ?', [executionId, 'stderr', errTail]);
    expect(logViewState(await readLogLayout(db.pool, executionId), 'all').stored).toBe(false);
  });

  it('retention purges an instance’s output in small batches and leaves the others', async () => {
    const gone = await newExecution();
    const kept = await newExecution();
    for (const e of [gone, kept]) {
      const cap = capture(e.executionId, [{ stream: 'stdout', data: randomBytes(25 * 1_000) }], 1_000);
      await appendLogItems(db.pool, cap.chunks, [{ executionId: e.executionId, stdoutBytes: 25_000, stderrBytes: 0, truncated: false }]);
    }
    const outcome = await purgeLogsOfInstances(db.pool, [gone.instanceId], 10);
    expect(outcome).toMatchObject({ executions: 1, chunks: 25 });
    expect(outcome.statements).toBeGreaterThanOrEqual(4);
    const count = async (id: string): Promise<number[]> => {
      const [c] = await db.pool.query<Array<RowDataPacket & { n: number }>>('SELECT COUNT(*) AS n FROM job_log_chunk WHERE execution_id = ?', [id]);
      const [e] = await db.pool.query<Array<RowDataPacket & { n: number }>>('SELECT COUNT(*) AS n FROM job_log_end WHERE execution_id = ?', [id]);
      return [Number(c[0]?.n), Number(e[0]?.n)];
    };
    expect(await count(gone.executionId)).toEqual([0, 0]);
    expect(await count(kept.executionId)).toEqual([25, 1]);
  });
});

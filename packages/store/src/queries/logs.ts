/**
 * Job output (`job_log_chunk`, `job_log_end`; migration 0004, DESIGN §11): appends by the
 * brokers, reads by the admin API.
 *
 * An append is idempotent by (execution, stream, offset): the same chunk twice, or a chunk
 * redelivered after an outage, hits the primary key and changes nothing; of two chunks at the
 * same offset the longer is kept (a worker that cut its output differently after a restart
 * fills in, never shrinks a chunk). Overlaps between chunks at different offsets are resolved
 * on read (log-spans.ts), so arrival order does not matter.
 *
 * Chunks are stored raw-deflated when that saves at least a tenth (codec `deflate`), else as
 * they came (`raw`); reads inflate them.
 */
import { promisify } from 'node:util';
import { deflateRaw, inflateRaw } from 'node:zlib';
import type { RowDataPacket } from 'mysql2';
import { LOG_CHUNK_MAX_BYTES, type LogStream } from '@ax/core';
import type { Queryable } from '../schema-version.js';
import { assemblePage, contiguousEnd, mergeSpans, storedBytes, streamComplete, type LogPiece, type LogRun } from './log-spans.js';

const deflate = promisify(deflateRaw);
const inflate = promisify(inflateRaw);

/** The views of an execution's output: one stream, or both interleaved in capture order. */
export type LogView = LogStream | 'all';

/** One chunk to append (`data` decoded from the message's base64). */
export interface NewLogChunk {
  readonly executionId: string;
  readonly stream: LogStream;
  /** Bytes of `stream` before the chunk. */
  readonly offset: number;
  /** Bytes of both streams before the chunk, in capture order. */
  readonly allOffset: number;
  readonly data: Buffer;
}

/** An execution's end marker: every byte before these sizes was sent. */
export interface LogEnd {
  readonly executionId: string;
  readonly stdoutBytes: number;
  readonly stderrBytes: number;
  readonly truncated: boolean;
}

/** Chunks shorter than this are stored raw (deflate would not pay for its header). */
const COMPRESS_MIN_BYTES = 256;

/** Largest decoded chunk a read must look back for (a chunk starting before `from` may reach into it). */
const CHUNK_REACH_BYTES = LOG_CHUNK_MAX_BYTES + 3;

/** Most bytes one page holds (ADMIN-API.md: `limit` default and max 4 MiB). */
export const LOG_PAGE_MAX_BYTES = 4 * 1_048_576;

/** Largest payload of one multi-row INSERT (hex-escaped by the driver: twice this on the wire). */
const APPEND_STATEMENT_MAX_BYTES = 4 * 1_048_576;

async function encodeChunk(data: Buffer): Promise<{ codec: 'raw' | 'deflate'; stored: Buffer }> {
  if (data.length < COMPRESS_MIN_BYTES) return { codec: 'raw', stored: data };
  const packed = await deflate(data, { level: 6 });
  return packed.length <= data.length * 0.9 ? { codec: 'deflate', stored: packed } : { codec: 'raw', stored: data };
}

async function decodeChunk(codec: string, stored: Buffer): Promise<Buffer> {
  return codec === 'deflate' ? inflate(stored) : stored;
}

/** What one append wrote. */
export interface AppendOutcome {
  /** Chunk rows sent (new or already there: a duplicate is not an error). */
  readonly chunks: number;
  /** Bytes of those chunks as stored (after compression). */
  readonly storedBytes: number;
  readonly ends: number;
}

/** A chunk as it will be stored (`encodeLogChunks`). */
export interface EncodedLogChunk {
  readonly chunk: NewLogChunk;
  readonly codec: 'raw' | 'deflate';
  readonly stored: Buffer;
}

/**
 * Compresses chunks for storage (empty ones are left out). Apart from `insertLogChunks` so that
 * a caller holding a transaction (the broker applying results that carry output) compresses
 * before it opens it.
 */
export async function encodeLogChunks(chunks: readonly NewLogChunk[]): Promise<EncodedLogChunk[]> {
  return Promise.all(chunks.filter((c) => c.data.length > 0).map(async (chunk) => ({ chunk, ...(await encodeChunk(chunk.data)) })));
}

/**
 * Inserts encoded chunks: one multi-row statement per ~4 MiB, in key order so that two brokers
 * appending overlapping batches lock in the same order. Returns the bytes stored.
 */
export async function insertLogChunks(db: Queryable, chunks: readonly EncodedLogChunk[]): Promise<number> {
  const encoded = [...chunks].sort(({ chunk: a }, { chunk: b }) =>
    a.executionId < b.executionId ? -1 : a.executionId > b.executionId ? 1 : a.stream < b.stream ? -1 : a.stream > b.stream ? 1 : a.offset - b.offset,
  );
  let stored = 0;
  for (let i = 0; i < encoded.length; ) {
    let bytes = 0;
    let j = i;
    while (j < encoded.length && (j === i || bytes + (encoded[j] as EncodedLogChunk).stored.length <= APPEND_STATEMENT_MAX_BYTES)) {
      bytes += (encoded[j] as EncodedLogChunk).stored.length;
      j += 1;
    }
    const rows = encoded.slice(i, j);
    // Of two chunks at one key the longer wins. Assignments run left to right and see the
    // values already assigned, so byte_len is compared before it is raised, last.
    await db.query(
      `INSERT INTO job_log_chunk (execution_id, stream, byte_offset, all_offset, byte_len, codec, data)
       VALUES ${rows.map(() => '(?, ?, ?, ?, ?, ?, ?)').join(', ')}
       ON DUPLICATE KEY UPDATE
         data = IF(VALUES(byte_len) > byte_len, VALUES(data), data),
         codec = IF(VALUES(byte_len) > byte_len, VALUES(codec), codec),
         all_offset = IF(VALUES(byte_len) > byte_len, VALUES(all_offset), all_offset),
         byte_len = GREATEST(byte_len, VALUES(byte_len))`,
      rows.flatMap(({ chunk: c, codec, stored: s }) => [c.executionId, c.stream, c.offset, c.allOffset, c.data.length, codec, s]),
    );
    stored += bytes;
    i = j;
  }
  return stored;
}

/**
 * Appends chunks (`encodeLogChunks`, `insertLogChunks`) and end markers (one statement). Not in
 * a transaction of its own: every row is idempotent, so a batch that fails halfway is simply
 * applied again.
 */
export async function appendLogItems(db: Queryable, chunks: readonly NewLogChunk[], ends: readonly LogEnd[] = []): Promise<AppendOutcome> {
  const encoded = await encodeLogChunks(chunks);
  const stored = await insertLogChunks(db, encoded);
  await insertLogEnds(db, ends);
  return { chunks: encoded.length, storedBytes: stored, ends: ends.length };
}

/**
 * Stores end markers (one statement); the first of an execution stands (there is one per
 * execution). Also called by the broker inside a result's transaction for attempts whose end
 * comes with the result (`printedNothing`, `output`), not as a log message.
 */
export async function insertLogEnds(db: Queryable, ends: readonly LogEnd[]): Promise<void> {
  if (ends.length === 0) return;
  await db.query(
    `INSERT IGNORE INTO job_log_end (execution_id, stdout_bytes, stderr_bytes, truncated) VALUES ${ends.map(() => '(?, ?, ?, ?)').join(', ')}`,
    ends.flatMap((e) => [e.executionId, e.stdoutBytes, e.stderrBytes, e.truncated ? 1 : 0]),
  );
}

/** What is stored of one execution's output (positions only, no bytes). */
export interface LogLayout {
  readonly executionId: string;
  /** The end marker, once stored. */
  readonly end: Omit<LogEnd, 'executionId'> | null;
  /** Stored runs of each view, in that view's coordinates. */
  readonly runs: Readonly<Record<LogView, readonly LogRun[]>>;
}

type LayoutRow = RowDataPacket & { stream: LogStream; byte_offset: number | string; all_offset: number | string; byte_len: number };
type EndRow = RowDataPacket & { stdout_bytes: number | string; stderr_bytes: number | string; truncated: number };

/**
 * Reads where an execution's chunks lie (from `idx_log_chunk_all` alone: no data pages) and
 * its end marker. One row per stored chunk: cheap for the chunk sizes workers send (see
 * docs/architecture.md "Job output").
 */
export async function readLogLayout(db: Queryable, executionId: string): Promise<LogLayout> {
  const [[rows], [endRows]] = await Promise.all([
    db.query<LayoutRow[]>(
      `SELECT stream, byte_offset, all_offset, byte_len FROM job_log_chunk FORCE INDEX (idx_log_chunk_all) WHERE execution_id = ?`,
      [executionId],
    ),
    db.query<EndRow[]>('SELECT stdout_bytes, stderr_bytes, truncated FROM job_log_end WHERE execution_id = ?', [executionId]),
  ]);
  return layoutOf(executionId, rows, endRows[0]);
}

function layoutOf(executionId: string, rows: readonly LayoutRow[], e: EndRow | undefined): LogLayout {
  const spans = { stdout: [] as Array<{ start: number; len: number }>, stderr: [] as Array<{ start: number; len: number }>, all: [] as Array<{ start: number; len: number }> };
  for (const r of rows) {
    const len = Number(r.byte_len);
    spans[r.stream].push({ start: Number(r.byte_offset), len });
    spans.all.push({ start: Number(r.all_offset), len });
  }
  return {
    executionId,
    end: e === undefined ? null : { stdoutBytes: Number(e.stdout_bytes), stderrBytes: Number(e.stderr_bytes), truncated: Number(e.truncated) === 1 },
    runs: { stdout: mergeSpans(spans.stdout), stderr: mergeSpans(spans.stderr), all: mergeSpans(spans.all) },
  };
}

/** The state of one view of an execution's output, as the API's headers tell it. */
export interface LogViewState {
  /**
   * Bytes of the view readable from 0 without waiting for a missing chunk: the end of the first
   * run; once `stored`, the view's total size (a truncated output's dropped bytes included, as
   * offsets are true positions).
   */
  readonly size: number;
  /** Bytes stored (dropped and not-yet-arrived bytes excluded). */
  readonly storedBytes: number;
  /** The end marker is stored and every byte it announces (less the dropped ones) is stored too. */
  readonly stored: boolean;
  /** Bytes past `AX_LOG_MAX_BYTES` were dropped (known from the end marker). */
  readonly truncated: boolean;
  /** The end marker is stored. */
  readonly sealed: boolean;
}

/** The state of `view` of `layout` (pure). */
export function logViewState(layout: LogLayout, view: LogView): LogViewState {
  const { end, runs } = layout;
  const truncated = end?.truncated ?? false;
  const stored =
    end !== null && streamComplete(runs.stdout, end.stdoutBytes, end.truncated) && streamComplete(runs.stderr, end.stderrBytes, end.truncated);
  const total = end === null ? 0 : view === 'stdout' ? end.stdoutBytes : view === 'stderr' ? end.stderrBytes : end.stdoutBytes + end.stderrBytes;
  const viewRuns = runs[view];
  return {
    size: stored ? total : contiguousEnd(viewRuns),
    storedBytes: storedBytes(viewRuns),
    stored,
    truncated,
    sealed: end !== null,
  };
}

type ChunkRow = RowDataPacket & { stream: LogStream; pos: number | string; codec: string; data: Buffer };

/** One page of a view. */
export interface LogPage {
  /** Bytes `[start, next)` of the view (less a skipped gap), concatenated. */
  readonly data: Buffer;
  /** The pieces of `data` with their streams (for `all`, stdout and stderr alternate). */
  readonly pieces: ReadonlyArray<LogPiece<LogStream>>;
  /** Position of the first byte of `data` (`from`, unless it lay in dropped bytes). */
  readonly start: number;
  /** Where the next page starts. */
  readonly next: number;
}

/** Options of {@link readLogPage}. */
export interface ReadLogPageOptions {
  /** Skip gaps (only right for a sealed, stored, truncated output: its gaps are the dropped bytes). Default false. */
  readonly skipGaps?: boolean;
}

/**
 * Bytes `[from, from + limit)` of `view` (limit capped at 4 MiB), contiguous from `from`: the
 * page stops before a chunk that has not arrived yet, so a reader that continues at `next`
 * never misses a byte.
 */
export async function readLogPage(db: Queryable, executionId: string, view: LogView, from: number, limit: number, opts: ReadLogPageOptions = {}): Promise<LogPage> {
  const size = Math.max(0, Math.min(limit, LOG_PAGE_MAX_BYTES));
  const to = from + size;
  const lowest = Math.max(0, from - CHUNK_REACH_BYTES);
  const [rows] =
    view === 'all'
      ? await db.query<ChunkRow[]>(
          `SELECT stream, all_offset AS pos, codec, data FROM job_log_chunk
            WHERE execution_id = ? AND all_offset >= ? AND all_offset < ? AND all_offset + byte_len > ?
            ORDER BY all_offset`,
          [executionId, lowest, to, from],
        )
      : await db.query<ChunkRow[]>(
          `SELECT stream, byte_offset AS pos, codec, data FROM job_log_chunk
            WHERE execution_id = ? AND stream = ? AND byte_offset >= ? AND byte_offset < ? AND byte_offset + byte_len > ?
            ORDER BY byte_offset`,
          [executionId, view, lowest, to, from],
        );
  const chunks = await Promise.all(rows.map(async (r) => ({ start: Number(r.pos), stream: r.stream, data: await decodeChunk(r.codec, r.data) })));
  const page = assemblePage(chunks, from, size, opts.skipGaps === true);
  if (opts.skipGaps === true && page.bytes === 0 && size > 0) {
    // `from` lies in dropped bytes that reach past `to`: the page starts at the next stored byte.
    const nextStart = await nextStoredPosition(db, executionId, view, from);
    if (nextStart !== null && nextStart > from) return readLogPage(db, executionId, view, nextStart, limit, opts);
  }
  return { data: Buffer.concat(page.pieces.map((p) => p.data)), pieces: page.pieces, start: page.start, next: page.next };
}

async function nextStoredPosition(db: Queryable, executionId: string, view: LogView, from: number): Promise<number | null> {
  const [rows] =
    view === 'all'
      ? await db.query<Array<RowDataPacket & { pos: number | string }>>(
          'SELECT MIN(all_offset) AS pos FROM job_log_chunk WHERE execution_id = ? AND all_offset >= ?',
          [executionId, from],
        )
      : await db.query<Array<RowDataPacket & { pos: number | string }>>(
          'SELECT MIN(byte_offset) AS pos FROM job_log_chunk WHERE execution_id = ? AND stream = ? AND byte_offset >= ?',
          [executionId, view, from],
        );
  const pos = rows[0]?.pos;
  return pos === null || pos === undefined ? null : Number(pos);
}

/**
 * `X-Ax-Log-Size` of the `all` view of each execution (for instance detail's `logSize`): two
 * queries for the lot, on `idx_log_chunk_all` and `job_log_end`. Executions without output are
 * absent.
 */
export async function logSizesOfExecutions(db: Queryable, executionIds: readonly string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (executionIds.length === 0) return out;
  const [[rows], [endRows]] = await Promise.all([
    db.query<Array<LayoutRow & { execution_id: string }>>(
      'SELECT execution_id, stream, byte_offset, all_offset, byte_len FROM job_log_chunk FORCE INDEX (idx_log_chunk_all) WHERE execution_id IN (?)',
      [executionIds],
    ),
    db.query<Array<EndRow & { execution_id: string }>>('SELECT execution_id, stdout_bytes, stderr_bytes, truncated FROM job_log_end WHERE execution_id IN (?)', [executionIds]),
  ]);
  const byExecution = new Map<string, LayoutRow[]>();
  for (const r of rows) {
    const list = byExecution.get(String(r.execution_id)) ?? [];
    list.push(r);
    byExecution.set(String(r.execution_id), list);
  }
  const ends = new Map(endRows.map((e) => [String(e.execution_id), e]));
  for (const [executionId, list] of byExecution) out.set(executionId, logViewState(layoutOf(executionId, list, ends.get(executionId)), 'all').size);
  return out;
}

/** An execution's end marker, or null before it arrived (one primary-key lookup). */
export async function readLogEnd(db: Queryable, executionId: string): Promise<LogEnd | null> {
  const [rows] = await db.query<EndRow[]>('SELECT stdout_bytes, stderr_bytes, truncated FROM job_log_end WHERE execution_id = ?', [executionId]);
  const e = rows[0];
  return e === undefined ? null : { executionId, stdoutBytes: Number(e.stdout_bytes), stderrBytes: Number(e.stderr_bytes), truncated: Number(e.truncated) === 1 };
}

/**
 * The output of one attempt (DESIGN §11 "Job output"), as it is cut into `log` items
 * (core `messages/log.ts`). Pure: no I/O, no clock; the shipper (`log-shipper.ts`) takes what
 * is ready and writes it to the outbox.
 *
 * - stdout and stderr are kept apart; every byte gets its true `offset` (bytes of its stream
 *   before it) and `allOffset` (bytes of both streams before it, in capture order). A chunk is
 *   one contiguous run of one stream (a switch of stream starts a new chunk), at most
 *   `LOG_CHUNK_MAX_BYTES`, so its bytes are contiguous in both numberings.
 * - Secrets are masked first (`stream-mask.ts`); offsets count the masked bytes, i.e. the
 *   stream as stored. Without secrets (nearly every job) that is the stream as written.
 * - Cap: the first `maxBytes` (both streams together) are shipped as they come (the head).
 *   Past it nothing more is shipped while the job runs; each stream's last `tailKeptBytes` are
 *   kept in memory and shipped at the end with their true offsets (a gap before them), then the
 *   `end` item says `truncated: true` (when a byte was actually left out: output past the cap
 *   that fits in the tails is all shipped). The same path takes over when the shipper says it
 *   is backed up (`shouldStopHead`) or lost a write: memory stays bounded, the job never waits.
 * - At the end, what is left may travel in the attempt's result instead (`EndMode`): nothing
 *   when it printed nothing, the rest and the end's sizes when that is short (#24: a short
 *   job's whole output then costs no `log` message, no outbox row and no broker write of its own).
 */
import { LOG_CHUNK_MAX_BYTES, LOG_TAIL_KEPT_BYTES, OUTPUT_IN_RESULT_MAX_BYTES, OUTPUT_IN_RESULT_MAX_CHUNKS, type LogStream, type ResultOutput } from '@ax/core';
import type { OutputSink } from '../executors/types.js';
import type { SecretMask } from '../executors/secret-mask.js';
import { StreamMask } from './stream-mask.js';

/** Limits of one attempt's output. */
export interface AttemptLogLimits {
  /** `AX_LOG_MAX_BYTES`: bytes shipped as they come, both streams together. */
  readonly maxBytes: number;
  /** Bytes of each stream's end kept past the cap; default `LOG_TAIL_KEPT_BYTES` (64 KiB). */
  readonly tailKeptBytes?: number;
  /** Largest chunk; default `LOG_CHUNK_MAX_BYTES` (256 KiB). */
  readonly chunkMaxBytes?: number;
}

/** What the attempt tells its shipper. */
export interface AttemptLogHooks {
  /** `bytes` more are waiting to be taken (`takeChunks`). */
  onPending(log: AttemptLog, bytes: number): void;
  /** True when the head must stop here (the outbox is backed up): the truncation path. */
  shouldStopHead(): boolean;
}

/** Items ready to be written: each a JSON object text (`LogItem`), with its data bytes. */
export interface LogItems {
  readonly items: string[];
  /** Decoded data bytes of each item (0 for an `end`). */
  readonly sizes: number[];
  dataBytes: number;
}

/** An empty list of items. */
export function noItems(): LogItems {
  return { items: [], sizes: [], dataBytes: 0 };
}

/**
 * Where an ended attempt's remaining output and end go:
 * - `items`: `log` items (a refusal: no result follows);
 * - `emptyInResult`: the result says `printedNothing` when there was no output, else items;
 * - `inResult`: also a short rest of output (≤ `OUTPUT_IN_RESULT_MAX_BYTES`) goes in the
 *   result's `output` (the dispatch said `outputInResult`: its broker stores it).
 */
export type EndMode = 'items' | 'emptyInResult' | 'inResult';

/** What the result carries of an ended attempt's output, when not items. */
export type ResultEnd = { readonly printedNothing: true } | { readonly output: ResultOutput };

/** The result's part of an attempt that printed nothing. */
export const PRINTED_NOTHING: ResultEnd = Object.freeze({ printedNothing: true as const });

/** A piece of output: contiguous bytes of one stream. */
interface Piece {
  readonly stream: LogStream;
  readonly offset: number;
  readonly allOffset: number;
  parts: Buffer[];
  size: number;
}

/** Tail pieces of a stream smaller than this are merged with the previous one when contiguous. */
const TAIL_MERGE_BYTES = 4_096;

/** One attempt's output. */
export class AttemptLog implements OutputSink {
  readonly executionId: string;
  private readonly ids: string;
  private readonly maxBytes: number;
  private readonly tailKeptBytes: number;
  private readonly chunkMaxBytes: number;
  private masks: Record<LogStream, StreamMask> | null = null;
  private readonly written: Record<LogStream, number> = { stdout: 0, stderr: 0 };
  private all = 0;
  /** True once the head stopped (the cap, a backed-up shipper, a lost write): the rest goes to the tails. */
  private headStopped = false;
  /** Bytes left out for good: trimmed off the tails, or lost with a write the shipper could not make. */
  private dropped = 0;
  /** Head chunks not yet taken, in capture order. */
  private chunks: Piece[] = [];
  private pending = 0;
  /** Past the cap: each stream's last pieces (at least `tailKeptBytes` when there are). */
  private tails: Record<LogStream, { pieces: Piece[]; size: number }> | null = null;
  private endedFlag = false;
  private inResult: ResultEnd | undefined;

  constructor(
    ids: { readonly executionId: string; readonly instanceId: string },
    limits: AttemptLogLimits,
    private readonly hooks: AttemptLogHooks,
  ) {
    this.executionId = ids.executionId;
    this.ids = `"executionId":${JSON.stringify(ids.executionId)},"instanceId":${JSON.stringify(ids.instanceId)}`;
    this.maxBytes = limits.maxBytes;
    this.tailKeptBytes = limits.tailKeptBytes ?? LOG_TAIL_KEPT_BYTES;
    this.chunkMaxBytes = Math.min(limits.chunkMaxBytes ?? LOG_CHUNK_MAX_BYTES, LOG_CHUNK_MAX_BYTES);
  }

  useMask(mask: SecretMask): void {
    if (mask.empty || this.masks !== null) return;
    this.masks = { stdout: new StreamMask(mask.patterns), stderr: new StreamMask(mask.patterns) };
  }

  write(stream: LogStream, data: Buffer | string): void {
    if (this.endedFlag) return;
    let bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    if (this.masks !== null) bytes = this.masks[stream].push(bytes);
    if (bytes.length > 0) this.capture(stream, bytes);
  }

  /** Bytes captured so far (masked), per stream. */
  get bytes(): Readonly<Record<LogStream, number>> {
    return this.written;
  }

  /**
   * True once output was left out (trimmed off a tail past the cap, or lost with a write). Output
   * past the cap that fits in the tails is all shipped, so it is not truncated.
   */
  get truncated(): boolean {
    return this.dropped > 0;
  }

  get ended(): boolean {
    return this.endedFlag;
  }

  /** Ended without a byte of output (none captured, none dropped). */
  get printedNothing(): boolean {
    return this.endedFlag && this.written.stdout === 0 && this.written.stderr === 0 && this.dropped === 0;
  }

  /** What the result carries of the output (set by `end`), or `undefined` when it went to items. */
  get resultEnd(): ResultEnd | undefined {
    return this.inResult;
  }

  /** Head bytes waiting to be taken. */
  get pendingBytes(): number {
    return this.pending;
  }

  /**
   * The shipper could not write `lostBytes` of this attempt's head: the head stops here, what
   * follows is kept only as the streams' tails, and the end says `truncated`.
   */
  lostHead(lostBytes: number): void {
    this.headStopped = true;
    this.dropped += Math.max(1, lostBytes);
  }

  /** Appends the head chunks waiting (as item texts) to `into` and forgets them. */
  takeChunks(into: LogItems): void {
    for (const piece of this.chunks) this.pushChunk(into, piece);
    this.chunks = [];
    this.pending = 0;
  }

  /**
   * Ends the output (the attempt finished, however): releases what the masks held, then, as
   * `mode` allows (`EndMode`), either gives the rest to the result (`resultEnd`) or appends the
   * head chunks still waiting, the kept tails and the `end` item to `into`. Idempotent (a
   * second call appends nothing).
   */
  end(into: LogItems, mode: EndMode = 'items'): void {
    if (this.endedFlag) return;
    if (this.masks !== null) {
      for (const stream of ['stdout', 'stderr'] as const) {
        const rest = this.masks[stream].end();
        if (rest.length > 0) this.capture(stream, rest);
      }
    }
    this.endedFlag = true;
    const pieces = this.chunks;
    this.chunks = [];
    this.pending = 0;
    if (this.tails !== null) {
      pieces.push(...[...this.keptTail(this.tails.stdout), ...this.keptTail(this.tails.stderr)].sort((a, b) => a.allOffset - b.allOffset));
      this.tails = null;
    }
    if (mode !== 'items' && this.printedNothing) {
      this.inResult = PRINTED_NOTHING;
      return;
    }
    if (mode === 'inResult' && pieces.length <= OUTPUT_IN_RESULT_MAX_CHUNKS && pieces.reduce((sum, p) => sum + p.size, 0) <= OUTPUT_IN_RESULT_MAX_BYTES) {
      const chunks = pieces.map((piece) => ({ stream: piece.stream, offset: piece.offset, allOffset: piece.allOffset, data: dataOf(piece).toString('base64') }));
      this.inResult = { output: { chunks, stdoutBytes: this.written.stdout, stderrBytes: this.written.stderr, truncated: this.dropped > 0 } };
      return;
    }
    for (const piece of pieces) this.pushChunk(into, piece);
    into.items.push(
      `{"part":"end",${this.ids},"stdoutBytes":${this.written.stdout},"stderrBytes":${this.written.stderr},"truncated":${this.dropped > 0}}`,
    );
    into.sizes.push(0);
  }

  private capture(stream: LogStream, bytes: Buffer): void {
    const offset = this.written[stream];
    const allOffset = this.all;
    this.written[stream] += bytes.length;
    this.all += bytes.length;
    if (!this.headStopped && this.hooks.shouldStopHead()) this.headStopped = true;
    let head = 0;
    if (!this.headStopped) {
      head = Math.min(bytes.length, Math.max(0, this.maxBytes - allOffset));
      if (head < bytes.length) this.headStopped = true;
    }
    if (head > 0) this.appendHead(stream, head === bytes.length ? bytes : bytes.subarray(0, head), offset, allOffset);
    if (head < bytes.length) this.appendTail(stream, head === 0 ? bytes : bytes.subarray(head), offset + head, allOffset + head);
  }

  private appendHead(stream: LogStream, bytes: Buffer, offset: number, allOffset: number): void {
    let done = 0;
    while (done < bytes.length) {
      const last = this.chunks[this.chunks.length - 1];
      const contiguous =
        last !== undefined && last.stream === stream && last.offset + last.size === offset + done && last.allOffset + last.size === allOffset + done;
      const piece = contiguous && last.size < this.chunkMaxBytes ? last : undefined;
      const room = piece === undefined ? this.chunkMaxBytes : this.chunkMaxBytes - piece.size;
      const n = Math.min(room, bytes.length - done);
      const part = n === bytes.length ? bytes : bytes.subarray(done, done + n);
      if (piece === undefined) this.chunks.push({ stream, offset: offset + done, allOffset: allOffset + done, parts: [part], size: n });
      else {
        piece.parts.push(part);
        piece.size += n;
      }
      done += n;
    }
    this.pending += bytes.length;
    this.hooks.onPending(this, bytes.length);
  }

  private appendTail(stream: LogStream, bytes: Buffer, offset: number, allOffset: number): void {
    this.tails ??= { stdout: { pieces: [], size: 0 }, stderr: { pieces: [], size: 0 } };
    const tail = this.tails[stream];
    const last = tail.pieces[tail.pieces.length - 1];
    if (last !== undefined && last.offset + last.size === offset && last.allOffset + last.size === allOffset && last.size + bytes.length <= TAIL_MERGE_BYTES) {
      // Many small writes: merged, so that a tail of 64 KiB is a few pieces, not thousands.
      last.parts = [Buffer.concat([...last.parts, bytes])];
      last.size += bytes.length;
    } else {
      tail.pieces.push({ stream, offset, allOffset, parts: [bytes], size: bytes.length });
    }
    tail.size += bytes.length;
    while (tail.pieces.length > 1 && tail.size - (tail.pieces[0]?.size ?? 0) >= this.tailKeptBytes) {
      const gone = tail.pieces.shift()?.size ?? 0;
      tail.size -= gone;
      this.dropped += gone;
    }
  }

  /** A stream's tail cut to its last `tailKeptBytes`, in chunks of at most `chunkMaxBytes`. */
  private keptTail(tail: { pieces: Piece[]; size: number }): Piece[] {
    const out: Piece[] = [];
    let skip = Math.max(0, tail.size - this.tailKeptBytes);
    this.dropped += skip;
    for (const piece of tail.pieces) {
      let data = Buffer.concat(piece.parts);
      let offset = piece.offset;
      let allOffset = piece.allOffset;
      if (skip > 0) {
        const cut = Math.min(skip, data.length);
        data = data.subarray(cut);
        offset += cut;
        allOffset += cut;
        skip -= cut;
      }
      for (let at = 0; at < data.length; at += this.chunkMaxBytes) {
        const part = data.subarray(at, at + this.chunkMaxBytes);
        out.push({ stream: piece.stream, offset: offset + at, allOffset: allOffset + at, parts: [part], size: part.length });
      }
    }
    return out;
  }

  private pushChunk(into: LogItems, piece: Piece): void {
    const data = dataOf(piece);
    into.items.push(
      `{"part":"chunk",${this.ids},"stream":"${piece.stream}","offset":${piece.offset},"allOffset":${piece.allOffset},"data":"${data.toString('base64')}"}`,
    );
    into.sizes.push(piece.size);
    into.dataBytes += piece.size;
  }
}

function dataOf(piece: Piece): Buffer {
  return piece.parts.length === 1 ? (piece.parts[0] ?? Buffer.alloc(0)) : Buffer.concat(piece.parts, piece.size);
}

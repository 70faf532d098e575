/**
 * Job output that travels in results (DESIGN §11, #24): a worker whose dispatch said
 * `outputInResult` sends a short attempt's output (the chunks not sent as `log` messages) and
 * its end in the result item (`output`), and an attempt that printed nothing says only
 * `printedNothing`. The broker stores both in the transaction that applies the result, so a
 * short job costs no `log` message, no decode on the logs consumer and no write of its own.
 *
 * As for `log` messages (log-chunks.ts), only output from the worker that ran the execution is
 * stored, and never from a relayed report; it is stored whatever the result does to the
 * instance (a fenced result's output is still its own). Chunks are compressed before the
 * transaction opens (`encodeResultOutputs`): deflate waits on the thread pool, and the
 * transaction holds the instances' locks.
 */
import type { Message, ResultItem, ResultMessage } from '@ax/core';
import { encodeLogChunks, insertLogChunks, insertLogEnds, type EncodedLogChunk, type LogEnd, type Queryable } from '@ax/store';
import type { LogMetrics } from './log-chunks.js';

/** The compressed chunks of each result item that carries output. */
export type EncodedOutputs = ReadonlyMap<ResultItem, readonly EncodedLogChunk[]>;

const NONE: EncodedOutputs = new Map();

/** Compresses the output the worker results of `messages` carry (call before their transaction). */
export async function encodeResultOutputs(messages: readonly Message[]): Promise<EncodedOutputs> {
  const items: ResultItem[] = [];
  for (const m of messages) {
    if (m.kind !== 'result' || m.origin === 'report') continue;
    for (const item of m.items) if (item.output !== undefined && item.output.chunks.length > 0) items.push(item);
  }
  if (items.length === 0) return NONE;
  const encoded = await Promise.all(
    items.map((item) =>
      encodeLogChunks(
        (item.output?.chunks ?? []).map((c) => ({ executionId: item.executionId, stream: c.stream, offset: c.offset, allOffset: c.allOffset, data: Buffer.from(c.data, 'base64') })),
      ),
    ),
  );
  return new Map(items.map((item, i) => [item, encoded[i] ?? []]));
}

/** The output rows of the results one transaction applies, written by `write` at its end. */
export class ResultOutputRows {
  readonly #chunks: EncodedLogChunk[] = [];
  readonly #ends: LogEnd[] = [];

  constructor(
    private readonly encoded: EncodedOutputs,
    private readonly metrics?: LogMetrics,
  ) {}

  /** Keeps the output `item` carries, when `executionWorkerId` (the store's) sent it. */
  add(message: ResultMessage, item: ResultItem, executionWorkerId: string): void {
    if (message.origin === 'report') return;
    const { output } = item;
    if (item.printedNothing !== true && output === undefined) return;
    if (executionWorkerId !== message.workerId) {
      this.metrics?.dropped.inc({ why: 'other_worker' });
      return;
    }
    if (output === undefined) {
      this.#ends.push({ executionId: item.executionId, stdoutBytes: 0, stderrBytes: 0, truncated: false });
      return;
    }
    for (const chunk of this.encoded.get(item) ?? []) {
      this.#chunks.push(chunk);
      this.metrics?.bytes.inc({ stream: chunk.chunk.stream }, chunk.chunk.data.length);
    }
    this.#ends.push({ executionId: item.executionId, stdoutBytes: output.stdoutBytes, stderrBytes: output.stderrBytes, truncated: output.truncated });
  }

  /** Writes what was kept (inside the results' transaction). */
  async write(conn: Queryable): Promise<void> {
    const stored = await insertLogChunks(conn, this.#chunks);
    if (stored > 0) this.metrics?.storedBytes.inc(stored);
    await insertLogEnds(conn, this.#ends);
  }
}

/**
 * Ships the output of every attempt the worker runs (DESIGN §11 "Job output"): collects the
 * chunks of all running attempts and writes them to the outbox together — one row, one SQLite
 * write, per flush, whatever the number of executions — then hands the row to the publisher.
 *
 * When output is written to the outbox:
 * - while a job runs: at most `flushMs` after it was printed (one worker-wide timer, armed only
 *   while something waits), or at once when `flushBytes` wait (a fast printer);
 * - when an attempt ends: its last chunks, kept tails and `end` item go into the SAME
 *   transaction as its result (`takeEnded` / `written`, called by the worker's result batch), so
 *   a result in the outbox always has the whole of its output there too.
 * - an attempt that printed nothing ships nothing at all (DESIGN §11: printing nothing costs
 *   nothing extra): its result says `printedNothing` and the broker stores the empty output's
 *   end with the result. The store still tells "printed nothing" from "output on its way".
 * - an attempt whose output left unsent at its end is short (at most
 *   `OUTPUT_IN_RESULT_MAX_BYTES`) sends that rest and its end in its result (`output`), when its
 *   dispatch says the broker stores them (`outputInResult`): no `log` message at all for most jobs.
 *
 * Never blocks or slows the job: writes only append to memory. When the outbox backs up
 * (`outboxMaxBytes` of unshipped output: a long RabbitMQ outage), every attempt stops its head
 * where it is and keeps only each stream's tail (`attempt-log.ts`), so memory and disk stay
 * bounded and the end says `truncated`. A write the outbox refuses (disk full) drops those
 * chunks the same way — a gap, marked truncated — instead of holding them in memory.
 */
import type { DispatchItem } from '@ax/core';
import { toError, type Logger } from '@ax/kit';
import type { LogRow, Outbox } from '../outbox.js';
import { AttemptLog, noItems, type EndMode, type LogItems, type ResultEnd } from './attempt-log.js';
import type { LogPublisher } from './log-publisher.js';

/** Options of `LogShipper`. */
export interface LogShipperOptions {
  readonly outbox: Outbox;
  readonly publisher: LogPublisher;
  readonly logger: Logger;
  /** `AX_LOG_MAX_BYTES`: output shipped per execution, both streams (then head + tails). */
  readonly maxBytes: number;
  /** `AX_LOG_FLUSH_MS`: longest wait of printed output before it is written and sent. */
  readonly flushMs: number;
  /** `AX_LOG_OUTBOX_MAX_BYTES`: unshipped output past which attempts only keep their tails. */
  readonly outboxMaxBytes: number;
  /** Bytes waiting that trigger a write at once; default 1 MiB. */
  readonly flushBytes?: number;
  readonly nowMs?: () => number;
}

/** Items per row and data per row (the publisher may put several rows in one message). */
const ROW_MAX_ITEMS = 1_000;
const ROW_MAX_DATA_BYTES = 1_048_576;

/** Items taken for a write that may still fail: given back with `giveBack`. */
export interface TakenLogItems {
  readonly batches: LogItems[];
  readonly executionIds: readonly string[];
}

/** The worker's log shipper. */
export class LogShipper {
  /** Attempts with head chunks waiting. */
  private readonly dirty = new Set<AttemptLog>();
  private pendingBytes = 0;
  /** Items of ended attempts, by execution id, not yet written. */
  private readonly ended = new Map<string, LogItems>();
  private endedBytes = 0;
  private timer: NodeJS.Timeout | undefined;
  private immediate = false;
  private stopped = false;
  /** Totals since the last `takeStats` (metrics are fed in bulk: a labelled counter per job showed in profiles). */
  private stats = { stdoutBytes: 0, stderrBytes: 0, truncated: 0 };
  private readonly flushBytes: number;
  private readonly now: () => number;
  private readonly hooks = {
    onPending: (log: AttemptLog, bytes: number): void => {
      this.dirty.add(log);
      this.pendingBytes += bytes;
      if (this.pendingBytes >= this.flushBytes) this.flushSoon();
      else this.arm();
    },
    shouldStopHead: (): boolean => this.options.publisher.backlogBytes + this.pendingBytes + this.endedBytes > this.options.outboxMaxBytes,
  };

  constructor(private readonly options: LogShipperOptions) {
    this.flushBytes = options.flushBytes ?? 1_048_576;
    this.now = options.nowMs ?? Date.now;
  }

  /** The output of an attempt about to run. */
  open(item: Pick<DispatchItem, 'executionId' | 'instanceId'>): AttemptLog {
    return new AttemptLog(item, { maxBytes: this.options.maxBytes }, this.hooks);
  }

  /**
   * The attempt ended (however: success, failure, timeout, cancel, kill): its remaining output
   * and its `end` item wait for the result's write (`takeEnded`), or the timer's; or, as `mode`
   * allows (`EndMode`), they travel in the result, and this returns what the result must carry
   * (`printedNothing` or `output`; nothing is queued then). Idempotent: a second call returns
   * what the first did.
   */
  end(log: AttemptLog, mode: EndMode): ResultEnd | undefined {
    if (log.ended) return log.resultEnd;
    this.pendingBytes -= log.pendingBytes;
    this.dirty.delete(log);
    const items = noItems();
    log.end(items, mode);
    this.stats.stdoutBytes += log.bytes.stdout;
    this.stats.stderrBytes += log.bytes.stderr;
    if (log.truncated) this.stats.truncated += 1;
    if (log.resultEnd !== undefined) return log.resultEnd;
    this.ended.set(log.executionId, items);
    this.endedBytes += items.dataBytes;
    // The result's write normally takes them first; the timer is the fallback.
    this.arm();
    return undefined;
  }

  /** Takes the ended items of these executions, for the transaction that writes their results. */
  takeEnded(executionIds: readonly string[]): TakenLogItems | null {
    const batches: LogItems[] = [];
    const taken: string[] = [];
    for (const id of executionIds) {
      const items = this.ended.get(id);
      if (items === undefined) continue;
      this.ended.delete(id);
      this.endedBytes -= items.dataBytes;
      batches.push(items);
      taken.push(id);
    }
    return batches.length === 0 ? null : { batches, executionIds: taken };
  }

  /** Writes taken items (inside the caller's transaction) and returns the rows to `push` after its commit. */
  write(taken: TakenLogItems): LogRow[] {
    const nowMs = this.now();
    return rowsOf(taken.batches).map((row) => this.options.outbox.enqueueLog(row.items, row.dataBytes, nowMs));
  }

  /** The transaction of `write` failed: the items wait for the timer's write. */
  giveBack(taken: TakenLogItems): void {
    taken.executionIds.forEach((id, i) => {
      const items = taken.batches[i];
      if (items === undefined) return;
      this.ended.set(id, items);
      this.endedBytes += items.dataBytes;
    });
    this.arm();
  }

  /** Writes everything waiting now (the timer, a fast printer, shutdown). Never throws. */
  flushNow(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.dirty.size === 0 && this.ended.size === 0) return;
    const batches: LogItems[] = [];
    const heads: Array<{ log: AttemptLog; bytes: number }> = [];
    for (const log of this.dirty) {
      const items = noItems();
      log.takeChunks(items);
      batches.push(items);
      heads.push({ log, bytes: items.dataBytes });
    }
    this.dirty.clear();
    this.pendingBytes = 0;
    const endedBatches = [...this.ended.values()];
    this.ended.clear();
    this.endedBytes = 0;
    batches.push(...endedBatches);
    let rows: LogRow[];
    try {
      const nowMs = this.now();
      rows = this.options.outbox.transaction(() => rowsOf(batches).map((row) => this.options.outbox.enqueueLog(row.items, row.dataBytes, nowMs)));
    } catch (error) {
      // Not kept in memory (a sick disk must not grow the heap): running attempts continue on
      // the truncation path (their end says truncated); the ended ones' output is lost.
      for (const { log, bytes } of heads) log.lostHead(bytes);
      this.options.logger.error(
        { err: toError(error), attempts: heads.length, ended: endedBatches.length },
        'log outbox: could not write job output; those chunks are dropped (the logs say truncated)',
      );
      return;
    }
    this.options.publisher.push(rows);
  }

  /** Bytes captured by ended attempts and how many were truncated, since the last call. */
  takeStats(): { stdoutBytes: number; stderrBytes: number; truncated: number } {
    const stats = this.stats;
    this.stats = { stdoutBytes: 0, stderrBytes: 0, truncated: 0 };
    return stats;
  }

  /** Stops the timer (the worker is stopping; call `flushNow` first). */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(): void {
    if (this.timer !== undefined || this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flushNow();
    }, this.options.flushMs);
    this.timer.unref();
  }

  private flushSoon(): void {
    if (this.immediate || this.stopped) return;
    this.immediate = true;
    setImmediate(() => {
      this.immediate = false;
      this.flushNow();
    });
  }
}

/** Cuts item lists into rows of at most `ROW_MAX_ITEMS` items and `ROW_MAX_DATA_BYTES` of data (one chunk may pass it). */
function rowsOf(batches: readonly LogItems[]): LogItems[] {
  const rows: LogItems[] = [];
  let row = noItems();
  for (const batch of batches) {
    batch.items.forEach((item, i) => {
      const size = batch.sizes[i] ?? 0;
      if (row.items.length > 0 && (row.items.length >= ROW_MAX_ITEMS || row.dataBytes + size > ROW_MAX_DATA_BYTES)) {
        rows.push(row);
        row = noItems();
      }
      row.items.push(item);
      row.sizes.push(size);
      row.dataBytes += size;
    });
  }
  if (row.items.length > 0) rows.push(row);
  return rows;
}

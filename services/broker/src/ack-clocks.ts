/**
 * R8, "the ACK deadline starts when the publish is confirmed", written a moment later and in
 * batches. At claim an instance gets a generous deadline (claim + publish allowance + ACK
 * timeout), so a publish held through an AMQP outage never expires in the database first.
 * After the confirm the deadline must come down to confirm + ACK timeout.
 *
 * Writing that at once cost one UPDATE per dispatch message on the dispatch path, and at
 * thousands of jobs a second most of those rows were already RUNNING or SUCCESS a few hundred
 * ms later. So confirms wait `settleMs` here and are then written in one statement. It
 * conditions on `state = 'DISPATCHED'` and the current execution, so rows that moved on are
 * read but not written. The deadline written counts from the newest confirm of the batch. That
 * is lenient by at most one flush interval, never strict. A broker that dies before the flush
 * leaves the generous deadline: those instances are re-routed later, never early.
 */
import { startAckDeadlines, type Queryable } from '@ax/store';

interface Confirmed {
  readonly instanceId: string;
  readonly executionId: string;
  readonly messageDeadline: Date;
  readonly confirmedAtMs: number;
}

/** Options of `AckClocks`. */
export interface AckClocksOptions {
  /** The ACK timeout (`AX_ACK_TIMEOUT_MS`). */
  readonly ackTimeoutMs: number;
  /** How long a confirm waits before its deadline is written; default 1000. */
  readonly settleMs?: number;
  /** Rows per statement; default 1000. */
  readonly batchSize?: number;
  readonly nowMs?: () => number;
}

/** Confirmed dispatches whose ACK deadline is still the generous one from the claim. */
export class AckClocks {
  private pending: Confirmed[] = [];
  private readonly settleMs: number;
  private readonly batchSize: number;
  private readonly now: () => number;

  constructor(private readonly options: AckClocksOptions) {
    this.settleMs = options.settleMs ?? 1_000;
    this.batchSize = options.batchSize ?? 1_000;
    this.now = options.nowMs ?? Date.now;
  }

  /** Confirms not yet written. */
  get size(): number {
    return this.pending.length;
  }

  /** Records the confirm of one dispatch message (confirm time = now). */
  confirmed(items: ReadonlyArray<{ instanceId: string; executionId: string }>, messageDeadline: Date): void {
    const confirmedAtMs = this.now();
    for (const item of items) this.pending.push({ ...item, messageDeadline, confirmedAtMs });
  }

  /**
   * Writes the deadlines of confirms at least `settleMs` old (all of them with `all`, at
   * shutdown). Returns rows changed. On an error the confirms stay queued for the next call.
   */
  async flush(db: Queryable, opts: { all?: boolean } = {}): Promise<number> {
    let changed = 0;
    for (;;) {
      const nowMs = this.now();
      const cutoffMs = opts.all === true ? Number.POSITIVE_INFINITY : nowMs - this.settleMs;
      let n = 0;
      while (n < this.pending.length && n < this.batchSize && (this.pending[n] as Confirmed).confirmedAtMs <= cutoffMs) n++;
      if (n === 0) return changed;
      const batch = this.pending.slice(0, n);
      const newestMs = Math.max(...batch.map((c) => c.confirmedAtMs));
      const earliestDeadline = new Date(Math.min(...batch.map((c) => c.messageDeadline.getTime())));
      const remainingMs = Math.max(0, this.options.ackTimeoutMs - (nowMs - newestMs));
      changed += await startAckDeadlines(db, batch, earliestDeadline, remainingMs);
      this.pending = this.pending.slice(n);
    }
  }
}

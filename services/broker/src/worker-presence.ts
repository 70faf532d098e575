/**
 * Finding a killed worker in seconds, not one lease later (R14, DESIGN §11). RabbitMQ sees a
 * worker's connection close the moment its process dies; the Redis registry only notices when
 * the entry's TTL (the lease, 15 s) runs out. Either signal alone is not proof of death:
 *
 * - no consumer on the worker's control queue also happens when the worker is alive but its own
 *   link to RabbitMQ is down (its results then wait in its outbox, R14);
 * - a registry entry not refreshed lately also happens when Redis was slow for a moment.
 *
 * Together they are: a worker is **gone** when its control queue has had no consumer, seen by a
 * broker whose own AMQP link is up, at two readings in a row, and its registry entry has not
 * changed for `silenceMs` (the heartbeat period plus 2.5 s). A live worker keeps heartbeating Redis
 * whatever RabbitMQ does (worker.ts: the heartbeat does not depend on the bus), so the entry
 * changes within one period; a draining worker keeps its control consumer to the end. Only then
 * does the lease scan treat the worker's RUNNING executions as lost without waiting for the
 * lease to run out (timers.ts). Anything unclear — a queue the broker cannot see, the broker's
 * own link down — leaves the decision to the lease, as before.
 *
 * This file is the decision alone (no I/O): `observe` takes each sweep's readings.
 */

/** What one sweep saw of one registered worker. */
export interface PresenceReading {
  /** Consumers of the worker's control queue; null = could not tell (missing queue, no link). */
  readonly consumers: number | null;
  /** The registry entry's `at` (changes with every heartbeat). */
  readonly heartbeatAt: string;
}

interface Seen {
  /** The entry's `at` last seen. */
  heartbeatAt: string;
  /** When this broker saw `heartbeatAt` change, or first saw the worker (monotonic ms). */
  changedAtMs: number;
  /** Readings in a row that found no consumer. */
  missingReadings: number;
}

/** Per-broker memory of every registered worker's last heartbeat and consumer. */
export class WorkerPresence {
  private readonly seen = new Map<string, Seen>();

  /** @param silenceMs heartbeat silence that, with the consumer gone, means death (heartbeat period + 2.5 s). */
  constructor(private readonly silenceMs: number) {}

  /**
   * Takes the readings of one sweep (every registered worker) at `nowMs` (monotonic) and
   * returns the workers now known gone: no consumer at this reading and the one before, and no
   * heartbeat seen for `silenceMs`. Workers absent from `readings` are forgotten (their registry
   * entry expired: the lease path owns them now).
   */
  observe(nowMs: number, readings: ReadonlyMap<string, PresenceReading>): Set<string> {
    const gone = new Set<string>();
    for (const workerId of this.seen.keys()) if (!readings.has(workerId)) this.seen.delete(workerId);
    for (const [workerId, reading] of readings) {
      let seen = this.seen.get(workerId);
      if (seen === undefined) {
        // First sight counts as a heartbeat: a broker that just started waits a full silence.
        seen = { heartbeatAt: reading.heartbeatAt, changedAtMs: nowMs, missingReadings: 0 };
        this.seen.set(workerId, seen);
      } else if (reading.heartbeatAt !== seen.heartbeatAt) {
        seen.heartbeatAt = reading.heartbeatAt;
        seen.changedAtMs = nowMs;
      }
      if (reading.consumers === null) continue; // cannot tell: keep what we knew, decide nothing
      seen.missingReadings = reading.consumers > 0 ? 0 : seen.missingReadings + 1;
      if (seen.missingReadings >= 2 && nowMs - seen.changedAtMs >= this.silenceMs) gone.add(workerId);
    }
    return gone;
  }

  /** True when the last clear reading found no consumer on the worker's control queue. */
  isConsumerMissing(workerId: string): boolean {
    return (this.seen.get(workerId)?.missingReadings ?? 0) > 0;
  }

  /** Forgets everything (this broker's own link went down: readings from before are stale). */
  reset(): void {
    this.seen.clear();
  }
}

/**
 * Job prefetch (DESIGN R9, amended): how many dispatches a worker holds beyond its slots. Brokers
 * reserve it up to `slots + prefetch`; a held dispatch is ACKed at receipt, recorded in the
 * outbox, listed in the lease and started here the moment a slot frees, without a round trip
 * through a broker. A broker can recall one that has not started (`RECALL`, see worker.ts).
 *
 * Not `AX_WORKER_PREFETCH`: that is RabbitMQ's consumer prefetch of dispatch *messages* (each
 * carries up to 100 items and is acked right after the outbox write), which bounds nothing the
 * broker reserves. This one bounds *executions* held, and is advertised in the registry.
 */

/**
 * Default `AX_WORKER_JOB_PREFETCH`: as many as the worker's slots (docs/production.md "Job
 * prefetch"). Measured on the 2,000-task burst (bench `ax-burst-2000`, 256 slots per worker):
 * a prefetch equal to the slots started the median job at 0.63x of no prefetch, and beat 64.
 * No larger than the slots, every held job starts within one run of the jobs running now (R9,
 * R23's "one claim round plus one job's run"); the trade-off is that a held job waits on its
 * worker rather than in MySQL where any worker could take it (a broker recalls it when another
 * worker is free).
 */
export function defaultJobPrefetch(slots: number): number {
  return Math.max(0, slots);
}

/** Held dispatches and how long each has been held, for the registry entry (R9). */
export function heldEntries(held: Iterable<{ executionId: string; acceptedAtMs: number }>, nowMs: number): Array<{ executionId: string; heldMs: number }> {
  const out: Array<{ executionId: string; heldMs: number }> = [];
  for (const h of held) out.push({ executionId: h.executionId, heldMs: Math.max(0, Math.round(nowMs - h.acceptedAtMs)) });
  return out;
}

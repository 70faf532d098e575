/**
 * The routing view of the workers: the Redis registry (cached ≤ `registryCacheMs`) with each
 * worker's `running` taken as the larger of what it reports and its live reservations (R9).
 */
import type { WorkerSnapshot } from '@ax/core';
import type { Redis, RedisKeys } from '@ax/kit';
import { readRegistry, type WorkerRegistration } from '@ax/redis';
import type { Reservations } from './reservations.js';

/** Cached registry reads. */
export class WorkerDirectory {
  private cached: { atMs: number; workers: WorkerRegistration[] } | undefined;
  /** Workers whose queue was unroutable lately (returned dispatches, R8), until a time. */
  private readonly unroutableUntil = new Map<string, number>();

  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly reservations: Reservations,
    private readonly cacheMs: number,
  ) {}

  /** The registry (cached). */
  async registry(): Promise<WorkerRegistration[]> {
    const now = performance.now();
    if (this.cached === undefined || now - this.cached.atMs > this.cacheMs) {
      this.cached = { atMs: now, workers: await readRegistry(this.redis, this.keys) };
    }
    return this.cached.workers;
  }

  /** Forgets the cache (a worker changed). */
  invalidate(): void {
    this.cached = undefined;
  }

  /** Keeps a worker out of routing for `ms` (its queue is gone). */
  markUnroutable(workerId: string, ms: number): void {
    this.unroutableUntil.set(workerId, performance.now() + ms);
    this.invalidate();
  }

  /** Snapshots for routing: registry ∩ routable, `running` = max(reported, reserved). */
  async snapshots(): Promise<WorkerSnapshot[]> {
    const now = performance.now();
    const registry = (await this.registry()).filter((w) => (this.unroutableUntil.get(w.workerId) ?? 0) <= now);
    const reserved = await this.reservations.counts(registry.map((w) => w.workerId));
    return registry.map((w) => ({
      id: w.workerId,
      tags: w.tags,
      teams: w.teams ?? [],
      cores: w.cores,
      slots: w.slots,
      running: Math.max(w.running, reserved.get(w.workerId) ?? 0),
      avgDurationMs5m: w.avgDurationMs5m,
      ...(w.reservedSlots !== undefined ? { reservedSlots: w.reservedSlots } : {}),
      draining: w.draining,
      host: w.host,
      version: w.version,
    }));
  }
}

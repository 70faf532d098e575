/**
 * The routing view of the workers: the Redis registry (cached ≤ `registryCacheMs`) with each
 * worker's `running` taken as the larger of what it reports and its live reservations (R9), and
 * each enrolled worker's teams the server's record (R24, contract point 5): its live
 * enrollment's teams (`liveEnrollmentTeams`, cached ≤ `enrollmentCacheMs`) narrowed by what it
 * advertises. An enrolled worker whose enrollment is revoked or unknown, or whose advertised
 * teams are all outside its enrollment, is left out of routing.
 */
import { enrollmentOfWorkerId, routableTeams, type WorkerSnapshot } from '@ax/core';
import type { Redis, RedisKeys } from '@ax/kit';
import { readRegistry, type WorkerRegistration } from '@ax/redis';
import { liveEnrollmentTeams, type Queryable } from '@ax/store';
import type { Reservations } from './reservations.js';

/** How long the live enrollments' teams are kept (a revocation or team change reaches routing within this). */
export const ENROLLMENT_TEAMS_CACHE_MS = 5_000;

/** Cached registry reads. */
export class WorkerDirectory {
  private cached: { atMs: number; workers: WorkerRegistration[] } | undefined;
  private enrollments: { atMs: number; teams: ReadonlyMap<string, readonly string[]> } | undefined;
  /** Workers whose queue was unroutable lately (returned dispatches, R8), until a time. */
  private readonly unroutableUntil = new Map<string, number>();

  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly reservations: Reservations,
    private readonly cacheMs: number,
    private readonly db: Queryable,
    private readonly enrollmentCacheMs = ENROLLMENT_TEAMS_CACHE_MS,
  ) {}
  /** The registry (cached). */
  async registry(): Promise<WorkerRegistration[]> {
    const now = performance.now();
    if (this.cached === undefined || now - this.cached.atMs > this.cacheMs) {
      this.cached = { atMs: now, workers: await readRegistry(this.redis, this.keys) };
    }
    return this.cached.workers;
  }

  /** Forgets the caches (a worker or an enrollment changed). */
  invalidate(): void {
    this.cached = undefined;
    this.enrollments = undefined;
  }

  /**
   * The teams of the live enrollments (cached), read only when an enrolled worker is registered:
   * an installation without enrollments pays nothing. A failed read fails the caller (the
   * dispatch pass retries): routing never guesses an enrolled worker's teams.
   */
  private async enrollmentTeams(registry: readonly WorkerRegistration[]): Promise<ReadonlyMap<string, readonly string[]>> {
    if (!registry.some((w) => enrollmentOfWorkerId(w.workerId) !== null)) return new Map();
    const now = performance.now();
    if (this.enrollments === undefined || now - this.enrollments.atMs > this.enrollmentCacheMs) {
      this.enrollments = { atMs: now, teams: await liveEnrollmentTeams(this.db) };
    }
    return this.enrollments.teams;
  }

  /** Keeps a worker out of routing for `ms` (its queue is gone). */
  markUnroutable(workerId: string, ms: number): void {
    this.unroutableUntil.set(workerId, performance.now() + ms);
    this.cached = undefined;
  }

  /** Snapshots for routing: registry ∩ routable ∩ serving some team, `running` = max(reported, reserved). */
  async snapshots(): Promise<WorkerSnapshot[]> {
    const now = performance.now();
    const all = await this.registry();
    const live = await this.enrollmentTeams(all);
    const registry: Array<{ w: WorkerRegistration; teams: readonly string[] }> = [];
    for (const w of all) {
      if ((this.unroutableUntil.get(w.workerId) ?? 0) > now) continue;
      const teams = routableTeams(w.workerId, w.teams, live);
      if (teams !== null) registry.push({ w, teams });
    }
    const reserved = await this.reservations.counts(registry.map(({ w }) => w.workerId));
    return registry.map(({ w, teams }) => ({
      id: w.workerId,
      tags: w.tags,
      teams,
      cores: w.cores,
      slots: w.slots,
      // R9 prefetch: reserved up to slots + prefetch (a skewed worker's 0 slots hold nothing).
      ...(w.prefetch !== undefined && w.prefetch > 0 ? { prefetch: w.prefetch } : {}),
      running: Math.max(w.running, reserved.get(w.workerId) ?? 0),
      avgDurationMs5m: w.avgDurationMs5m,
      ...(w.reservedSlots !== undefined ? { reservedSlots: w.reservedSlots } : {}),
      draining: w.draining,
      host: w.host,
      version: w.version,
    }));
  }
}

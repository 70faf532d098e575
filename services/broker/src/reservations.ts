/**
 * Slot reservations (R9): per worker a Redis ZSET `<ns>:slots:<id>` of execution ids scored by
 * their expiry (Redis `TIME`, ms). A broker reserves atomically (Lua) and never beyond the
 * worker's slots; a reservation is released on result, refusal, re-route or lease loss, and
 * one left by a crashed broker expires by itself. While an execution runs its reservation is
 * extended (ACK), so a long job keeps its slot, and each lease renewal writes it again, so a
 * reservation Redis lost (an outage, a failover that dropped recent writes) comes back within a
 * lease period instead of leaving the worker counted short until its jobs end.
 */
import type { Redis, RedisKeys } from '@ax/kit';

const RESERVE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local slots = tonumber(ARGV[1])
local ttl = tonumber(ARGV[2])
local count = redis.call('ZCARD', KEYS[1])
local granted = 0
for i = 3, #ARGV do
  if count >= slots then break end
  if redis.call('ZADD', KEYS[1], 'NX', now + ttl, ARGV[i]) == 1 then count = count + 1 end
  granted = granted + 1
end
redis.call('PEXPIRE', KEYS[1], ttl + 60000)
return granted`;

const COUNT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {}
for i = 1, #KEYS do
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now)
  out[i] = redis.call('ZCARD', KEYS[i])
end
return out`;

// Moves reservations' expiry to now + ttl. ARGV[2] is the ZADD flag: 'XX' extends only those
// that exist (the ACK), '' also writes back those that are missing (lease renewal, R14: the
// worker's registry lists these executions as running, so each holds a slot whether or not Redis
// still has its reservation). The ACK keeps XX: a result applied by another broker between the
// ACK's commit and its extension would otherwise leave a reservation for an ended execution, held
// for the attempt's whole timeout. At renewal the same race holds one for at most the renewal's
// TTL (two lease periods): a slot counted too long, never one counted short.
const EXTEND = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[1])
for i = 3, #ARGV do
  if ARGV[2] == 'XX' then redis.call('ZADD', KEYS[1], 'XX', now + ttl, ARGV[i]) else redis.call('ZADD', KEYS[1], now + ttl, ARGV[i]) end
end
local pttl = redis.call('PTTL', KEYS[1])
if pttl ~= -2 and pttl < ttl + 60000 then redis.call('PEXPIRE', KEYS[1], ttl + 60000) end
return 1`;

/** Execution ids grouped by worker: one ledger call per worker for a batch of reservations. */
export function idsByWorker(reservations: ReadonlyArray<{ workerId: string; executionId: string }>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const r of reservations) {
    const ids = out.get(r.workerId);
    if (ids === undefined) out.set(r.workerId, [r.executionId]);
    else ids.push(r.executionId);
  }
  return out;
}

/** Releases a batch of reservations, one ledger call per worker. */
export async function releaseAll(ledger: Reservations, reservations: ReadonlyArray<{ workerId: string; executionId: string }>): Promise<void> {
  await Promise.all([...idsByWorker(reservations)].map(([workerId, ids]) => ledger.release(workerId, ids)));
}

/** Moves a batch of reservations' expiry to now + `ttlMs`, one ledger call per worker. */
export async function extendAll(ledger: Reservations, reservations: ReadonlyArray<{ workerId: string; executionId: string }>, ttlMs: number): Promise<void> {
  await Promise.all([...idsByWorker(reservations)].map(([workerId, ids]) => ledger.extend(workerId, ids, ttlMs)));
}

/** The reservation ledger of a namespace. */
export interface Reservations {
  /** Reserves slots for `executionIds` in order; returns how many of the first ones got one. */
  reserve(workerId: string, slots: number, executionIds: readonly string[], ttlMs: number): Promise<number>;
  /** Live reservations per worker. */
  counts(workerIds: readonly string[]): Promise<Map<string, number>>;
  /** Moves the expiry of existing reservations to now + `ttlMs`. */
  extend(workerId: string, executionIds: readonly string[], ttlMs: number): Promise<void>;
  /**
   * Sets the expiry of reservations to now + `ttlMs`, adding those that are missing: for
   * executions the worker's registry lists as running (lease renewal, R14).
   */
  restore(workerId: string, executionIds: readonly string[], ttlMs: number): Promise<void>;
  /** Releases reservations (unknown ids are ignored). */
  release(workerId: string, executionIds: readonly string[]): Promise<void>;
}

/** Reservations in Redis. */
export function createReservations(redis: Redis, keys: RedisKeys): Reservations {
  return {
    async reserve(workerId, slots, executionIds, ttlMs) {
      if (executionIds.length === 0 || slots <= 0) return 0;
      const granted = await redis.eval(RESERVE, 1, keys.slots(workerId), slots, Math.round(ttlMs), ...executionIds);
      return Number(granted);
    },
    async counts(workerIds) {
      const out = new Map<string, number>();
      if (workerIds.length === 0) return out;
      const replies = (await redis.eval(COUNT, workerIds.length, ...workerIds.map((id) => keys.slots(id)))) as number[];
      workerIds.forEach((id, i) => out.set(id, Number(replies[i] ?? 0)));
      return out;
    },
    async extend(workerId, executionIds, ttlMs) {
      if (executionIds.length === 0) return;
      await redis.eval(EXTEND, 1, keys.slots(workerId), Math.round(ttlMs), 'XX', ...executionIds);
    },
    async restore(workerId, executionIds, ttlMs) {
      if (executionIds.length === 0) return;
      await redis.eval(EXTEND, 1, keys.slots(workerId), Math.round(ttlMs), '', ...executionIds);
    },
    async release(workerId, executionIds) {
      if (executionIds.length === 0) return;
      await redis.zrem(keys.slots(workerId), ...executionIds);
    },
  };
}

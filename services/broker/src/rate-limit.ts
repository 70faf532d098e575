/**
 * The global dispatch rate (`AX_DISPATCH_RATE`): one token bucket in Redis shared by every
 * broker (`<ns>:rate:dispatch`), refilled on the Redis clock. Burst = one second of rate.
 */
import type { Redis, RedisKeys } from '@ax/kit';

const TAKE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local want = tonumber(ARGV[3])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(state[1]) or burst
local ts = tonumber(state[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - ts) * rate / 1000)
local granted = math.floor(math.min(want, tokens))
tokens = tokens - granted
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'ts', now)
redis.call('PEXPIRE', KEYS[1], 60000)
return granted`;

/** A shared limiter. */
export interface RateLimiter {
  /** Takes up to `want` tokens; resolves with how many were granted (0 = wait). */
  take(want: number): Promise<number>;
  /** Gives back tokens that were taken but not used. */
  refund(count: number): Promise<void>;
}

/** Unlimited when `ratePerSecond` is undefined. */
export function createRateLimiter(redis: Redis, keys: RedisKeys, ratePerSecond: number | undefined): RateLimiter {
  if (ratePerSecond === undefined) return { take: async (want) => want, refund: async () => undefined };
  const key = keys.rate('dispatch');
  const burst = Math.max(1, ratePerSecond);
  return {
    async take(want) {
      return Number(await redis.eval(TAKE, 1, key, ratePerSecond, burst, want));
    },
    async refund(count) {
      if (count > 0) await redis.hincrbyfloat(key, 'tokens', count);
    },
  };
}

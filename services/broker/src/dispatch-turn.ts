/**
 * Brokers take turns at the claim (`<ns>:lock:dispatch`, `SET NX PX`): one claims, routes,
 * reserves and commits while the others wait for their next wake.
 *
 * Correctness never depended on it: `FOR UPDATE SKIP LOCKED` and the slot reservations (R9)
 * keep two claims apart. What the turn saves is work: two brokers claiming at once split the
 * due rows between them (half-size batches) and each sized its claim by the same free slots,
 * so about a quarter of the rows claimed found their slot taken at reservation and were only
 * locked, read and let go (two brokers, #4 bench). The turn covers the claim transaction
 * only, not the publish; it expires by itself when its holder dies (`TURN_TTL_MS`), and a
 * broker that cannot reach Redis claims without it (its reservations need Redis anyway).
 */
import type { Redis } from '@ax/kit';

/** Longer than any claim transaction; a dead holder delays the others at most this long. */
export const TURN_TTL_MS = 5_000;

const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

/** The outcome of `takeTurn`: mine (release it after the commit), another broker's, or unknown (Redis failed). */
export type Turn = 'mine' | 'busy' | 'unknown';

/** Takes the dispatch turn for `holder` (the broker id). Never throws. */
export async function takeTurn(redis: Redis, key: string, holder: string, ttlMs = TURN_TTL_MS): Promise<Turn> {
  try {
    return (await redis.set(key, holder, 'PX', ttlMs, 'NX')) === 'OK' ? 'mine' : 'busy';
  } catch {
    return 'unknown';
  }
}

/** Gives the turn back if `holder` still has it. Never throws (the turn then expires). */
export async function giveTurn(redis: Redis, key: string, holder: string): Promise<void> {
  try {
    await redis.eval(RELEASE, 1, key, holder);
  } catch {
    // expires by itself
  }
}

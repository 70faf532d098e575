/**
 * Rendezvous (highest-random-weight) hashing: each (key, worker) pair gets a pseudo-random
 * weight and the key goes to the worker with the highest. A worker joining takes only the keys
 * it now wins; a worker leaving gives up only its own; every other key stays put.
 */

/**
 * cyrb53: a fast, well-mixed 53-bit string hash (public domain, bryc). Deterministic across
 * processes and platforms; not cryptographic.
 */
export function hash53(text: string, seed = 0): number {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/** The weight of `workerId` for `key` (higher wins). */
export function rendezvousWeight(key: string, workerId: string): number {
  return hash53(`${key}\u0000${workerId}`);
}

/** `candidates` ordered best first for `key` (ties, practically impossible, by id). */
export function rankByRendezvous<T extends { id: string }>(key: string, candidates: readonly T[]): T[] {
  return candidates
    .map((candidate) => ({ candidate, weight: rendezvousWeight(key, candidate.id) }))
    .sort((a, b) => b.weight - a.weight || (a.candidate.id < b.candidate.id ? -1 : a.candidate.id > b.candidate.id ? 1 : 0))
    .map((entry) => entry.candidate);
}

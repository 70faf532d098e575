/**
 * Start jitter of scheduled slots (the task field `jitterSeconds`; Temporal's spec jitter):
 * each slot starts up to N seconds after its time, by an offset that depends only on the task
 * and the slot. Every scheduler, and every re-scan of the same scheduler, computes the same
 * offset, so a slot's `due_at` never moves once written and two schedulers never disagree.
 * `expectedTime` stays the slot; only `due_at` carries the offset.
 */

/** Largest `jitterSeconds` a task may ask for (one hour). */
export const MAX_JITTER_SECONDS = 3_600;

/** FNV-1a over the UTF-16 code units of `text`, then the murmur3 finaliser (spreads low bits). */
function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * The start offset of the slot `expectedMs` of task `taskName`, in whole seconds as ms:
 * `hash(taskName, expectedMs) mod (jitterSeconds + 1)` seconds, so 0…jitterSeconds inclusive.
 * 0 when `jitterSeconds` is 0 (or not a positive number).
 */
export function slotJitterMs(taskName: string, expectedMs: number, jitterSeconds: number): number {
  if (!(jitterSeconds > 0)) return 0;
  const span = Math.floor(jitterSeconds) + 1;
  return (hash32(`${taskName}\n${expectedMs}`) % span) * 1_000;
}

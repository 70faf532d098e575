/**
 * `AX_WORKER_RESERVED_SLOTS` (issue #22): `N:P` keeps N slots, `S%:P` a share S of the slots
 * (rounded, at least 1), for instances of priority ≥ P; lower priority starts only while more
 * than those are free (worker-snapshot.ts `freeSlots`). Pure parsing, no I/O.
 */
import type { ReservedSlots } from './worker-snapshot.js';

const SYNTAX = /^(\d{1,5})(%?):(\d)$/;

/** The reserve of a worker with `slots` slots, or a sentence naming what is wrong. */
export function parseReservedSlots(raw: string, slots: number): { ok: true; value: ReservedSlots } | { ok: false; problem: string } {
  const m = SYNTAX.exec(raw.trim());
  if (m === null) return { ok: false, problem: `expected "N:P" or "S%:P" (N slots or S % of them kept for priority ≥ P, 0..9), got ${JSON.stringify(raw)}` };
  const amount = Number(m[1]);
  const share = m[2] === '%';
  const minPriority = Number(m[3]);
  if (share && (amount < 1 || amount > 99)) return { ok: false, problem: `a share must be 1% to 99%, got ${amount}%` };
  const kept = share ? Math.max(1, Math.round((slots * amount) / 100)) : amount;
  if (kept < 1) return { ok: false, problem: 'at least 1 slot must be kept' };
  if (kept >= slots) return { ok: false, problem: `${kept} kept of ${slots} slots leaves none for lower priority` };
  if (minPriority < 1) return { ok: false, problem: 'priority 0 would keep the slots for everything: use 1 to 9' };
  return { ok: true, value: { slots: kept, minPriority } };
}

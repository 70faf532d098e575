/**
 * fixed_rate slots (DESIGN R1): `anchorMs + k·periodMs` exactly, for k ≥ 0. The anchor is the
 * schedule's `startAt`, or the task's creation time; nothing is rounded to a whole second.
 */

/** The slot grid of a fixed_rate schedule. */
export interface FixedRateGrid {
  /** Slot 0, epoch milliseconds. */
  readonly anchorMs: number;
  /** Distance between slots, milliseconds (≥ 1). */
  readonly periodMs: number;
}

/** The first slot strictly after `afterMs` (slot 0 when `afterMs` is before the anchor). */
export function fixedRateNextAfter(grid: FixedRateGrid, afterMs: number): number {
  const { anchorMs, periodMs } = grid;
  if (afterMs < anchorMs) return anchorMs;
  let k = Math.floor((afterMs - anchorMs) / periodMs) + 1;
  // Guard against a quotient rounded across an integer: the answer is the least k with a slot > afterMs.
  while (anchorMs + k * periodMs <= afterMs) k++;
  while (k > 0 && anchorMs + (k - 1) * periodMs > afterMs) k--;
  return anchorMs + k * periodMs;
}

/** The last slot at or before `untilMs`, or null when `untilMs` is before the anchor. */
export function fixedRateLastAtOrBefore(grid: FixedRateGrid, untilMs: number): number | null {
  const { anchorMs, periodMs } = grid;
  if (untilMs < anchorMs) return null;
  let k = Math.floor((untilMs - anchorMs) / periodMs);
  while (anchorMs + k * periodMs > untilMs) k--;
  while (anchorMs + (k + 1) * periodMs <= untilMs) k++;
  return anchorMs + k * periodMs;
}

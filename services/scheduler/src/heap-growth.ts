/**
 * How far V8 lets the scheduler's heap grow past what survived its last full collection (#24).
 *
 * Most of the scheduler's heap is its cache of task definitions: long-lived, read every second,
 * replaced only when a task changes. On a host with gigabytes of memory V8 lets the old space
 * grow to about four times the live heap before the next full collection (its "heap growing
 * factor"), so a scheduler with 100,000 tasks and 92-107 MB live reached 416-420 MB of RSS,
 * much of it garbage waiting. A factor of 2 (`AX_SCHEDULER_HEAP_GROWTH_PERCENT` 100) kept it at
 * 322-361 MB for the same CPU on Node 20 (a full collection of a cache that barely changes is
 * cheap and rare; production.md, Memory).
 *
 * V8 uses the flag at each full collection, so setting it at start works like the command line
 * flag `--heap-growing-percent` (which NODE_OPTIONS does not accept). A heap cap
 * (`--max-old-space-size`, production.md) still bounds the heap; this only decides how much
 * garbage may wait below it.
 */
import v8 from 'node:v8';

/** Sets V8's heap growing factor to 1 + `percent` / 100; 0 leaves V8's own choice. */
export function setHeapGrowingPercent(percent: number): void {
  if (!Number.isInteger(percent) || percent < 0) throw new RangeError(`heap growing percent must be a whole number ≥ 0, got ${String(percent)}`);
  if (percent > 0) v8.setFlagsFromString(`--heap-growing-percent=${percent}`);
}

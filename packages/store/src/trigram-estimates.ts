/**
 * Row estimates of task search's trigrams (queries/task-text.ts, `rarestFirst`), kept for a
 * minute per database handle. A search weighs up to 6 trigrams with an `EXPLAIN`, a statement of
 * its own: one of the five a page of search results sends (#24), for figures that move slowly.
 * They only choose which trigram a search walks, never which tasks match, so a stale estimate
 * costs speed, never a wrong answer.
 */

/** How long an estimate is reused, ms. */
export const TRIGRAM_ESTIMATE_MAX_AGE_MS = 60_000;
/** Most estimates kept per database handle; the oldest kept goes first. */
export const TRIGRAM_ESTIMATES_MAX = 10_000;

/** Estimated rows per trigram, each with the time it was read. */
export class TrigramEstimates {
  private readonly byTrigram = new Map<string, { rows: number; atMs: number }>();

  constructor(
    private readonly maxAgeMs: number = TRIGRAM_ESTIMATE_MAX_AGE_MS,
    private readonly max: number = TRIGRAM_ESTIMATES_MAX,
  ) {}

  /** The estimate of `trigram` read less than the maximum age before `nowMs`, else undefined. */
  get(trigram: string, nowMs: number): number | undefined {
    const known = this.byTrigram.get(trigram);
    return known !== undefined && nowMs - known.atMs < this.maxAgeMs ? known.rows : undefined;
  }

  /** Keeps `rows` as the estimate of `trigram` read at `nowMs`. */
  set(trigram: string, rows: number, nowMs: number): void {
    this.byTrigram.delete(trigram); // re-inserted last: the Map's order is the order of reading
    this.byTrigram.set(trigram, { rows, atMs: nowMs });
    if (this.byTrigram.size > this.max) {
      const oldest = this.byTrigram.keys().next();
      if (oldest.done !== true) this.byTrigram.delete(oldest.value);
    }
  }

  get size(): number {
    return this.byTrigram.size;
  }
}

const byHandle = new WeakMap<object, TrigramEstimates>();

/**
 * The estimates of one database handle (a pool, or a connection): a process may reach several
 * databases, and one's figures say nothing of another's.
 */
export function trigramEstimatesOf(db: object): TrigramEstimates {
  let estimates = byHandle.get(db);
  if (estimates === undefined) {
    estimates = new TrigramEstimates();
    byHandle.set(db, estimates);
  }
  return estimates;
}

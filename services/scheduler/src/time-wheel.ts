/**
 * A hierarchical time wheel (pure, no clock of its own): the fires of the next minutes, in two
 * levels. Level 0 holds one bucket per tick (`tickMs`, default 1 s) for the `level0Size` ticks
 * after the cursor; level 1 holds one bucket per `level0Size` ticks beyond that. When the
 * cursor enters a level-1 bucket its entries cascade down into level 0. Inserting and popping
 * are O(1) per entry; a jump of the cursor (a pause) walks the buckets in between, never more
 * than the level-1 span (a larger jump drains everything that is due at once).
 */

/** One fire on the wheel. */
export interface WheelEntry {
  readonly taskName: string;
  /** Definition version the fire was computed from. */
  readonly version: number;
  /** Epoch ms of the slot. */
  readonly expectedMs: number;
  /** When to pop it, if earlier than the slot (a slot created ahead of time); default `expectedMs`. */
  readonly fireAtMs?: number;
}

/** When an entry is popped. */
function atOf(e: WheelEntry): number {
  return e.fireAtMs ?? e.expectedMs;
}

export class TimeWheel {
  readonly #tickMs: number;
  readonly #level0Size: number;
  readonly #level0 = new Map<number, WheelEntry[]>();
  readonly #level1 = new Map<number, WheelEntry[]>();
  /** Index of the first level-0 tick not yet popped. */
  #cursor: number;
  #size = 0;

  /** `startMs`: the wheel's present; earlier entries are due at the first `popDue`. */
  constructor(opts: { startMs: number; tickMs?: number; level0Size?: number }) {
    this.#tickMs = opts.tickMs ?? 1_000;
    this.#level0Size = opts.level0Size ?? 64;
    this.#cursor = Math.floor(opts.startMs / this.#tickMs);
  }

  /** Entries on the wheel. */
  get size(): number {
    return this.#size;
  }

  /** Adds a fire. An entry already due (before the cursor) is popped by the next `popDue`. */
  add(entry: WheelEntry): void {
    const tick = Math.floor(atOf(entry) / this.#tickMs);
    this.#size += 1;
    if (tick < this.#cursor + this.#level0Size) {
      push(this.#level0, Math.max(tick, this.#cursor), entry);
    } else {
      push(this.#level1, Math.floor(tick / this.#level0Size), entry);
    }
  }

  /** Removes and returns every entry with `fireAtMs ?? expectedMs <= nowMs`, ascending by that time. */
  popDue(nowMs: number): WheelEntry[] {
    const nowTick = Math.floor(nowMs / this.#tickMs);
    const due: WheelEntry[] = [];
    if (nowTick - this.#cursor > this.#level0Size * 1_000) {
      // A very long jump: take every due entry without walking each tick.
      for (const store of [this.#level0, this.#level1]) {
        for (const [key, list] of store) {
          const keep = list.filter((e) => atOf(e) > nowMs);
          for (const e of list) if (atOf(e) <= nowMs) due.push(e);
          if (keep.length === 0) store.delete(key);
          else store.set(key, keep);
        }
      }
      this.#size -= due.length;
      this.#cursor = nowTick;
      this.#rebucket();
      return due.sort((a, b) => atOf(a) - atOf(b));
    }
    while (this.#cursor <= nowTick) {
      const t = this.#cursor;
      if (t % this.#level0Size === 0) this.#cascade(t / this.#level0Size);
      const list = this.#level0.get(t);
      if (list !== undefined) {
        if (t < nowTick) {
          due.push(...list);
          this.#level0.delete(t);
        } else {
          // The current tick: only what is due by now.
          const keep: WheelEntry[] = [];
          for (const e of list) (atOf(e) <= nowMs ? due : keep).push(e);
          if (keep.length === 0) this.#level0.delete(t);
          else this.#level0.set(t, keep);
        }
      }
      if (t === nowTick) break;
      this.#cursor = t + 1;
    }
    this.#size -= due.length;
    return due.sort((a, b) => atOf(a) - atOf(b));
  }

  /** Removes every entry of a task (definition changed or gone); returns how many. */
  removeTask(taskName: string): number {
    let removed = 0;
    for (const store of [this.#level0, this.#level1]) {
      for (const [key, list] of store) {
        const keep = list.filter((e) => e.taskName !== taskName);
        removed += list.length - keep.length;
        if (keep.length === 0) store.delete(key);
        else if (keep.length !== list.length) store.set(key, keep);
      }
    }
    this.#size -= removed;
    return removed;
  }

  /** Moves the level-1 bucket `block` down into level 0. */
  #cascade(block: number): void {
    const list = this.#level1.get(block);
    if (list === undefined) return;
    this.#level1.delete(block);
    for (const e of list) push(this.#level0, Math.max(Math.floor(atOf(e) / this.#tickMs), this.#cursor), e);
  }

  /** After a long jump: entries of level 1 that are now near move down. */
  #rebucket(): void {
    const cursor = this.#cursor;
    for (const [block, list] of [...this.#level1]) {
      if ((block + 1) * this.#level0Size <= cursor + this.#level0Size) {
        this.#level1.delete(block);
        for (const e of list) push(this.#level0, Math.max(Math.floor(atOf(e) / this.#tickMs), cursor), e);
      }
    }
  }
}

function push(store: Map<number, WheelEntry[]>, key: number, entry: WheelEntry): void {
  const list = store.get(key);
  if (list === undefined) store.set(key, [entry]);
  else list.push(entry);
}

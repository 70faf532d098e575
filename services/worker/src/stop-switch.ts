/**
 * The stop signal of one job: what executors and the slot queue need of an `AbortSignal`
 * (`aborted`, `reason`, an 'abort' listener), without one. A worker creates one per job and
 * almost never fires it; `new AbortController()` plus its EventTarget listeners cost ~4 % of a
 * worker's CPU at thousands of no-op HTTP jobs a second. A real `AbortSignal` fits this
 * interface too (tests pass one).
 */

/** A signal that fires at most once, with a reason. */
export interface StopSignal {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/** A `StopSignal` and the switch that fires it. */
export class StopSwitch implements StopSignal {
  private stoppedWith: { reason: unknown } | undefined;
  /** Usually 0 or 1 listener (the executor's), so a plain array. */
  private listeners: Array<() => void> = [];

  get aborted(): boolean {
    return this.stoppedWith !== undefined;
  }

  get reason(): unknown {
    return this.stoppedWith?.reason;
  }

  /** Listeners fire once in any case (as with `{ once: true }`): the switch fires only once. */
  addEventListener(_type: 'abort', listener: () => void, _options?: { once?: boolean }): void {
    if (this.stoppedWith === undefined) this.listeners.push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const i = this.listeners.indexOf(listener);
    if (i >= 0) this.listeners.splice(i, 1);
  }

  /** Fires the signal (no-op when already fired); listeners run synchronously, in order. */
  abort(reason: unknown): void {
    if (this.stoppedWith !== undefined) return;
    this.stoppedWith = { reason };
    const listeners = this.listeners;
    this.listeners = [];
    for (const listener of listeners) listener();
  }

  /** This switch's signal (itself: the switch is also the signal, to save an object per job). */
  get signal(): StopSignal {
    return this;
  }
}

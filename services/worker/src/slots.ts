/**
 * The worker's local semaphore of `AX_WORKER_SLOTS` (§5, R12): what runs at once. Waiters are
 * served by task priority (higher first), then in arrival order. With reserved slots (#22) a
 * priority below the reserve's starts only while more than the reserved slots are free: the
 * broker keeps that line for what it dispatches, and this keeps it for what the worker holds
 * ahead (R9 prefetch), which starts here without asking a broker.
 */
import type { ReservedSlots } from '@ax/core';
import type { StopSignal } from './stop-switch.js';

interface Waiter {
  readonly priority: number;
  readonly seq: number;
  readonly grant: () => void;
  readonly reject: (error: Error) => void;
}

/** Thrown to waiters removed by `cancelWaiting` or `close`. */
export class SlotWaitCanceledError extends Error {
  override readonly name = 'SlotWaitCanceledError';
}

/** A counting semaphore with priorities. */
export class Slots {
  private used = 0;
  private seq = 0;
  private waiters: Waiter[] = [];

  constructor(
    readonly size: number,
    private readonly reserve?: ReservedSlots,
  ) {}

  /** True when a job of `priority` may take a slot now (one is free, beyond the reserve if it is below it). */
  private fits(priority: number | undefined): boolean {
    const free = this.size - this.used;
    if (free <= 0) return false;
    const r = this.reserve;
    return r === undefined || priority === undefined || priority >= r.minPriority || free > r.slots;
  }

  /** Slots in use. */
  get inUse(): number {
    return this.used;
  }

  /** Callers waiting for a slot. */
  get waiting(): number {
    return this.waiters.length;
  }

  /** A slot now, without waiting (nobody waits and one is free for `priority`), or null. */
  tryAcquire(priority?: number): (() => void) | null {
    // Waiters are granted as soon as they fit (`next`), so whoever still waits does not fit now:
    // without a reserve that means no slot is free; with one, only a priority the waiters lack
    // (at or above the reserve's) can pass them.
    if (!this.fits(priority)) return null;
    this.used += 1;
    return this.releaser();
  }

  /** Resolves with a release function once a slot is free. */
  acquire(priority = 0, signal?: StopSignal): Promise<() => void> {
    return new Promise((resolve, reject) => {
      const now = this.tryAcquire(priority);
      if (now !== null) {
        resolve(now);
        return;
      }
      const release = this.releaser();
      const waiter: Waiter = {
        priority,
        seq: this.seq++,
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          this.used += 1;
          resolve(release);
        },
        reject,
      };
      const onAbort = (): void => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new SlotWaitCanceledError('stopped while waiting for a slot'));
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
      this.waiters.sort((a, b) => b.priority - a.priority || a.seq - b.seq);
    });
  }

  /** A release function that frees its slot once, however often it is called. */
  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.used -= 1;
      this.next();
    };
  }

  /** Grants waiters in order; one below the reserve is passed over (not dropped) while only reserved slots are free. */
  private next(): void {
    for (let i = 0; i < this.waiters.length && this.used < this.size; ) {
      const w = this.waiters[i] as Waiter;
      if (!this.fits(w.priority)) {
        i++;
        continue;
      }
      this.waiters.splice(i, 1);
      w.grant();
    }
  }
}

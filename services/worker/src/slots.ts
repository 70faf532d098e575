/**
 * The worker's local semaphore of `AX_WORKER_SLOTS` (§5, R12): what runs at once. Waiters are
 * served by task priority (higher first), then in arrival order.
 */
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

  constructor(readonly size: number) {}

  /** Slots in use. */
  get inUse(): number {
    return this.used;
  }

  /** Callers waiting for a slot. */
  get waiting(): number {
    return this.waiters.length;
  }

  /** A slot now, without waiting (nobody waits and one is free), or null. */
  tryAcquire(): (() => void) | null {
    if (this.used >= this.size || this.waiters.length > 0) return null;
    this.used += 1;
    return this.releaser();
  }

  /** Resolves with a release function once a slot is free. */
  acquire(priority = 0, signal?: StopSignal): Promise<() => void> {
    return new Promise((resolve, reject) => {
      const now = this.tryAcquire();
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

  private next(): void {
    while (this.used < this.size && this.waiters.length > 0) this.waiters.shift()?.grant();
  }
}

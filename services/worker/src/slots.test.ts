import { describe, expect, it } from 'vitest';
import { SlotWaitCanceledError, Slots } from './slots.js';

describe('Slots', () => {
  it('R12 bounds concurrency and serves waiters by priority, then arrival', async () => {
    const slots = new Slots(2);
    const a = await slots.acquire();
    const b = await slots.acquire();
    const order: string[] = [];
    const low = slots.acquire(1).then((r) => (order.push('low'), r));
    const high = slots.acquire(9).then((r) => (order.push('high'), r));
    const low2 = slots.acquire(1).then((r) => (order.push('low2'), r));
    expect(slots.inUse).toBe(2);
    expect(slots.waiting).toBe(3);
    a();
    a(); // a second release is ignored
    (await high)();
    b();
    (await low)();
    (await low2)();
    expect(order).toEqual(['high', 'low', 'low2']);
    expect(slots.inUse).toBe(0);
  });

  it('an aborted waiter leaves the queue', async () => {
    const slots = new Slots(1);
    const release = await slots.acquire();
    const controller = new AbortController();
    const waiting = slots.acquire(0, controller.signal);
    controller.abort();
    await expect(waiting).rejects.toBeInstanceOf(SlotWaitCanceledError);
    expect(slots.waiting).toBe(0);
    release();
    expect(slots.inUse).toBe(0);
  });

  it('tryAcquire takes a free slot at once, and none while someone waits or all are taken', async () => {
    const slots = new Slots(1);
    const first = slots.tryAcquire();
    expect(first).not.toBeNull();
    expect(slots.tryAcquire()).toBeNull();
    const waiting = slots.acquire();
    first?.();
    first?.(); // a second call frees nothing more
    const second = await waiting;
    expect(slots.inUse).toBe(1);
    second();
    expect(slots.inUse).toBe(0);
  });

  it('#22 R9 a held job below the reserve priority never takes a reserved slot; one at or above it passes the waiting low ones', async () => {
    const slots = new Slots(4, { slots: 2, minPriority: 7 });
    const low1 = slots.tryAcquire(1);
    const low2 = slots.tryAcquire(1);
    expect(low1).not.toBeNull();
    expect(low2).not.toBeNull();
    expect(slots.tryAcquire(1)).toBeNull(); // only the 2 reserved slots are free
    const order: string[] = [];
    const heldLow = slots.acquire(1).then((r) => (order.push('low'), r));
    expect(slots.waiting).toBe(1);
    const urgent = slots.tryAcquire(9); // passes the waiting low one
    expect(urgent).not.toBeNull();
    const urgent2 = await slots.acquire(8);
    expect(slots.inUse).toBe(4);
    urgent?.();
    expect(order).toEqual([]); // 1 free, reserved: the low one still waits
    low1?.();
    await Promise.resolve();
    expect(order).toEqual([]); // 2 free: no more than the reserve
    urgent2();
    (await heldLow)(); // 3 free, more than the reserve: it starts
    expect(order).toEqual(['low']);
    low2?.();
    expect(slots.inUse).toBe(0);
  });
});

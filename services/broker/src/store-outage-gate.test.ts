import { describe, expect, it } from 'vitest';
import { StoreOutageGate, outageDelayMs } from './store-outage-gate.js';

const never = new AbortController().signal;

describe('store outage gate (#23)', () => {
  it('#23 backs off exponentially from the initial pause up to the cap, with ±20 % jitter', () => {
    const mid = (): number => 0.5;
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => outageDelayMs(n, 500, 15_000, mid))).toEqual([500, 1_000, 2_000, 4_000, 8_000, 15_000, 15_000]);
    expect(outageDelayMs(1_000, 500, 15_000, mid)).toBe(15_000);
    expect(outageDelayMs(1, 500, 15_000, () => 0)).toBe(400);
    expect(outageDelayMs(1, 500, 15_000, () => 0.999_999)).toBe(600);
  });

  it('#23 lets attempts through at once while healthy, and counts first attempts failing together as one failure', async () => {
    const gate = new StoreOutageGate({ initialDelayMs: 10, random: () => 0.5 });
    const turns = await Promise.all([gate.enter(never), gate.enter(never), gate.enter(never)]);
    expect(turns.every((t) => t !== null && !t.retry)).toBe(true);
    for (const t of turns) gate.failed(t!);
    expect(gate.consecutiveFailures).toBe(1);
  });

  it('#23 while failing, makes one attempt at a time, each after the backoff pause', async () => {
    const gate = new StoreOutageGate({ initialDelayMs: 40, maxDelayMs: 40, random: () => 0.5 });
    gate.failed((await gate.enter(never))!);
    const log: string[] = [];
    const attempt = async (name: string): Promise<void> => {
      const turn = await gate.enter(never);
      log.push(`start ${name}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
      log.push(`end ${name}`);
      gate.failed(turn!);
      turn!.release();
    };
    const started = Date.now();
    await Promise.all([attempt('a'), attempt('b'), attempt('c')]);
    expect(log).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
    expect(Date.now() - started).toBeGreaterThanOrEqual(3 * 40 - 5);
    expect(gate.consecutiveFailures).toBe(4);
  });

  it('#23 an aborted wait returns no turn and does not block the turns behind it; a success ends the outage', async () => {
    const gate = new StoreOutageGate({ initialDelayMs: 20, maxDelayMs: 20, random: () => 0.5 });
    gate.failed((await gate.enter(never))!);
    const first = await gate.enter(never);
    const stop = new AbortController();
    const aborted = gate.enter(stop.signal);
    const behind = gate.enter(never);
    stop.abort();
    expect(await aborted).toBeNull();
    expect(gate.succeeded()).toBeGreaterThanOrEqual(0);
    first!.release();
    const next = await behind;
    expect(next).not.toBeNull();
    next!.release();
    expect(gate.consecutiveFailures).toBe(0);
    expect(gate.succeeded()).toBeUndefined();
    const free = await gate.enter(never);
    expect(free?.retry).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import { parseReservedSlots } from './reserved-slots.js';
import { freeSlots, slotCapFor, type WorkerSnapshot } from './worker-snapshot.js';

const worker = (running: number): WorkerSnapshot => ({ id: 'w', tags: [], cores: 4, slots: 4, running, avgDurationMs5m: 0, draining: false, reservedSlots: { slots: 2, minPriority: 7 } });

describe('reserved slots', () => {
  it('parses a count or a share of the slots, with the priority that may use them', () => {
    expect(parseReservedSlots('2:7', 4)).toEqual({ ok: true, value: { slots: 2, minPriority: 7 } });
    expect(parseReservedSlots(' 25%:8 ', 16)).toEqual({ ok: true, value: { slots: 4, minPriority: 8 } });
    expect(parseReservedSlots('1%:5', 4)).toEqual({ ok: true, value: { slots: 1, minPriority: 5 } });
  });

  it('refuses what would leave nothing for lower priority, or keep nothing, naming the value', () => {
    const problem = (raw: string): string => {
      const parsed = parseReservedSlots(raw, 4);
      return parsed.ok ? '(accepted)' : parsed.problem;
    };
    expect(problem('4:7')).toContain('4 kept of 4 slots');
    expect(problem('0:7')).toContain('at least 1 slot');
    expect(problem('2:0')).toContain('priority 0');
    expect(problem('150%:7')).toContain('1% to 99%');
    expect(problem('two:7')).toContain('"two:7"');
  });

  it('below the reserve priority, only slots beyond the reserved ones count as free', () => {
    expect(freeSlots(worker(0), 1)).toBe(2);
    expect(freeSlots(worker(2), 1)).toBe(0); // two low jobs run: the other two stay for priority ≥ 7
    expect(freeSlots(worker(2), 9)).toBe(2);
    expect(freeSlots(worker(2), 7)).toBe(2);
    expect(freeSlots(worker(2))).toBe(2); // no priority given: every slot
    expect(slotCapFor(worker(0), 1)).toBe(2);
    expect(slotCapFor(worker(0), 8)).toBe(4);
  });
});

import { describe, expect, it } from 'vitest';
import { localTime, utcAndLocal } from '../format';
import type { Instance } from '../types';
import { eachLimited, filtersFromSearch, filtersToSearch, gridRows, isoToUtcInput, splitForCancel, splitForRerun, toggled, toggledAll, utcInputToIso } from './logic';

const inst = (id: string, state: Instance['state']): Instance => ({
  id,
  taskName: 't',
  expectedTime: '2026-12-01T00:00:00.000Z',
  bizDate: '2026-12-01',
  trigger: 'schedule',
  runNo: 1,
  state,
  reason: null,
  attempt: 1,
  maxAttempts: 1,
  priority: 5,
  params: {},
  workerId: null,
  currentExecutionId: null,
  createdAt: '2026-12-01T00:00:00.000Z',
  startedAt: null,
  endedAt: null,
  durationMs: null,
  rerunBatchId: null,
  traceId: null,
  taskVersion: null,
  waiting: null,
  team: 'default',
});

describe('instance filters in the URL', () => {
  it('round-trips, leaving out empty ones, in a fixed order', () => {
    const f = filtersFromSearch('?to=2026-12-02T00:00:00.000Z&worker=w1&trigger=manual&team=pay&junk=1');
    expect(f).toEqual({ team: 'pay', task: '', state: '', bizDate: '', worker: 'w1', trigger: 'manual', from: '', to: '2026-12-02T00:00:00.000Z' });
    expect(filtersToSearch(f)).toBe('team=pay&worker=w1&trigger=manual&to=2026-12-02T00%3A00%3A00.000Z');
    expect(filtersToSearch({ task: '  ' })).toBe('');
  });

  it('reads a datetime-local value as UTC and back', () => {
    expect(utcInputToIso('2026-12-01T10:00')).toBe('2026-12-01T10:00:00.000Z');
    expect(utcInputToIso('2026-12-01T10:00:30')).toBe('2026-12-01T10:00:30.000Z');
    expect(utcInputToIso('yesterday')).toBe('');
    expect(utcInputToIso('')).toBe('');
    expect(isoToUtcInput('2026-12-01T18:00:00+08:00')).toBe('2026-12-01T10:00');
    expect(isoToUtcInput('2026-12-01T10:00:30.000Z')).toBe('2026-12-01T10:00:30');
    expect(isoToUtcInput('nope')).toBe('');
  });
});

describe('gridRows', () => {
  it('puts each cell under its date, null where a task has none', () => {
    const cell = { task: 'b', bizDate: '2026-12-02', instanceId: '7', state: 'FAILED' as const, expectedTime: '', durationMs: 5, slots: 1 };
    const rows = gridRows({ root: null, days: 14, bizDates: ['2026-12-01', '2026-12-02'], tasks: ['a', 'b'], cells: [cell] });
    expect(rows).toEqual([
      { task: 'a', cells: [null, null] },
      { task: 'b', cells: [null, cell] },
    ]);
  });
});

describe('bulk selection', () => {
  it('reruns only final instances and cancels only the others, naming why the rest are skipped', () => {
    const sel = [inst('1', 'SUCCESS'), inst('2', 'RUNNING'), inst('3', 'FAILED'), inst('4', 'PENDING')];
    const rerun = splitForRerun(sel);
    expect(rerun.act.map((i) => i.id)).toEqual(['1', '3']);
    expect(rerun.skip.map((s) => [s.instance.id, s.why])).toEqual([
      ['2', 'RUNNING: not final, it cannot be re-run yet'],
      ['4', 'PENDING: not final, it cannot be re-run yet'],
    ]);
    const cancel = splitForCancel(sel);
    expect(cancel.act.map((i) => i.id)).toEqual(['2', '4']);
    expect(cancel.skip.map((s) => s.why)).toEqual(['SUCCESS: already final', 'FAILED: already final']);
  });

  it('toggles one and all', () => {
    expect([...toggled(new Set(['1']), '2')]).toEqual(['1', '2']);
    expect([...toggled(new Set(['1', '2']), '1')]).toEqual(['2']);
    expect([...toggledAll(new Set(['1']), ['1', '2'])].sort()).toEqual(['1', '2']);
    expect([...toggledAll(new Set(['1', '2', '9']), ['1', '2'])]).toEqual(['9']);
    expect([...toggledAll(new Set(), [])]).toEqual([]);
  });

  it('runs work with a bound on concurrency, keeping order and failures', async () => {
    let running = 0;
    let peak = 0;
    const results = await eachLimited([1, 2, 3, 4, 5], 2, async (n) => {
      running++;
      peak = Math.max(peak, running);
      await new Promise((r) => setTimeout(r, 1));
      running--;
      if (n === 3) throw new Error('three');
      return n * 10;
    });
    expect(peak).toBe(2);
    expect(results.map((r) => (r.ok ? r.value : (r.error as Error).message))).toEqual([10, 20, 'three', 40, 50]);
  });
});

describe('local time beside UTC', () => {
  it('shows the local clock, with the day when it differs from the UTC day', () => {
    expect(utcAndLocal('2026-12-01T10:00:00.000Z', 'Asia/Shanghai')).toBe('2026-12-01 10:00:00 UTC · 18:00 local');
    expect(localTime('2026-12-01T20:00:00.000Z', 'Asia/Shanghai')).toBe('12-02 04:00 local');
    expect(localTime('2026-12-01T02:00:00.000Z', 'America/New_York')).toBe('11-30 21:00 local');
    expect(utcAndLocal(null)).toBe('—');
  });
});

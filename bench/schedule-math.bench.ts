/**
 * Schedule math of @ax/core at scheduler scale: `npx vitest bench --run bench/schedule-math.bench.ts`.
 * Goal: a refill over 10,000 tasks (compile each definition, ask for its next fire) stays far
 * below the refill period; times are reported by vitest (mean ms per iteration).
 */
import { compileSchedule, type CompiledSchedule } from '@ax/core';
import { bench, describe } from 'vitest';

const TASKS = 10_000;
const NOW_MS = Date.parse('2026-06-15T03:04:05.678Z');
const FALL_BACK_MS = Date.parse('2026-11-01T05:59:00.000Z'); // New York, one minute before 01:00 EDT → EST

describe('10,000 tasks', () => {
  bench('compile 10,000 `* * * * * *` in Asia/Shanghai and take each next fire', () => {
    for (let i = 0; i < TASKS; i++) {
      const compiled = compileSchedule({ type: 'cron', expr: '* * * * * *', timezone: 'Asia/Shanghai' }, { anchorMs: 0 });
      compiled.nextAfter(NOW_MS + i);
    }
  });

  const compiled: CompiledSchedule[] = [];
  for (let i = 0; i < TASKS; i++) {
    compiled.push(compileSchedule({ type: 'cron', expr: `${i % 60} ${Math.floor(i / 60) % 60} * * * *`, timezone: 'Asia/Shanghai' }, { anchorMs: 0 }));
  }
  bench('next fire of 10,000 compiled tasks with 3,600 distinct expressions', () => {
    for (const schedule of compiled) schedule.nextAfter(NOW_MS);
  });

  bench('compile 10,000 `* * * * * *` in America/New_York and take each next fire on the fall-back day', () => {
    for (let i = 0; i < TASKS; i++) {
      const schedule = compileSchedule({ type: 'cron', expr: '* * * * * *', timezone: 'America/New_York' }, { anchorMs: 0 });
      schedule.nextAfter(FALL_BACK_MS + i * 10);
    }
  });
});

describe('one task', () => {
  const everySecond = compileSchedule({ type: 'cron', expr: '* * * * * *', timezone: 'Asia/Shanghai' }, { anchorMs: 0 });
  bench('next 60 fires of `* * * * * *` in Asia/Shanghai', () => {
    everySecond.between(NOW_MS, Infinity, 60);
  });

  const lastFriday = compileSchedule({ type: 'cron', expr: '0 30 2 * * 5L', timezone: 'America/New_York' }, { anchorMs: 0 });
  bench('next 60 fires of `0 30 2 * * 5L` in America/New_York (five years of months)', () => {
    lastFriday.between(NOW_MS, Infinity, 60);
  });
});

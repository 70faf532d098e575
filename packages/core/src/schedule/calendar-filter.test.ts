import { describe, expect, it } from 'vitest';
import { excludeCalendarDates, isExcludedByCalendar, dateInZone } from './calendar-filter.js';
import { compileSchedule } from './compile.js';

const DAY = 86_400_000;
// 0 2 * * * in Shanghai: 18:00 UTC the day before. Worked by hand: 2026-12-02 02:00 +08:00 = 2026-12-01T18:00Z.
const dec2 = Date.parse('2026-12-01T18:00:00.000Z');
const daily = compileSchedule({ type: 'cron', expr: '0 2 * * *', timezone: 'Asia/Shanghai' }, { anchorMs: 0 });

describe('excludeCalendarDates', () => {
  it('reads a slot date in the calendar zone, not in UTC', () => {
    expect(dateInZone(dec2, 'Asia/Shanghai')).toBe('2026-12-02');
    expect(dateInZone(dec2, 'UTC')).toBe('2026-12-01');
    expect(isExcludedByCalendar(dec2, { timezone: 'Asia/Shanghai', dates: new Set(['2026-12-02']) })).toBe(true);
    expect(isExcludedByCalendar(dec2, { timezone: 'UTC', dates: new Set(['2026-12-02']) })).toBe(false);
  });

  it('drops the listed dates from next, last and ranges, and keeps the rest', () => {
    const cal = excludeCalendarDates(daily, { timezone: 'Asia/Shanghai', dates: new Set(['2026-12-02', '2026-12-03']) });
    expect(cal.nextAfter(dec2 - 1)).toBe(dec2 + 2 * DAY);
    expect(cal.lastAtOrBefore(dec2 + DAY)).toBe(dec2 - DAY);
    expect(cal.between(dec2 - DAY - 1, dec2 + 3 * DAY, 10)).toEqual([dec2 - DAY, dec2 + 2 * DAY, dec2 + 3 * DAY]);
    expect(cal.between(dec2 - 1, Infinity, 2)).toEqual([dec2 + 2 * DAY, dec2 + 3 * DAY]);
  });

  it('pages past a long run of excluded dates instead of ending the range early', () => {
    const dates = new Set(Array.from({ length: 60 }, (_, i) => dateInZone(dec2 + i * DAY, 'Asia/Shanghai')));
    const cal = excludeCalendarDates(daily, { timezone: 'Asia/Shanghai', dates });
    expect(cal.between(dec2 - 1, Infinity, 3)).toEqual([dec2 + 60 * DAY, dec2 + 61 * DAY, dec2 + 62 * DAY]);
    expect(cal.nextAfter(dec2 - 1)).toBe(dec2 + 60 * DAY);
  });

  it('is the schedule itself for an empty calendar', () => {
    expect(excludeCalendarDates(daily, { timezone: 'UTC', dates: new Set() })).toBe(daily);
  });
});

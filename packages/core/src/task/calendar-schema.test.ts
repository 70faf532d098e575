import { describe, expect, it } from 'vitest';
import { parseCalendarBody } from './calendar-schema.js';

describe('parseCalendarBody', () => {
  it('fills team and timezone, sorts and deduplicates the dates', () => {
    expect(parseCalendarBody({ dates: ['2026-12-25', '2026-01-01', '2026-12-25'] })).toEqual({
      ok: true,
      value: { team: 'default', timezone: 'UTC', dates: ['2026-01-01', '2026-12-25'] },
    });
  });

  it.each([
    [{ dates: ['2026-02-29'] }, 'dates[0]: must be a calendar date YYYY-MM-DD, got "2026-02-29"'],
    [{ dates: ['26-1-1'] }, 'dates[0]: must be a calendar date YYYY-MM-DD'],
    [{ timezone: 'Mars/Olympus', dates: [] }, 'timezone: unknown time zone "Mars/Olympus"'],
    [{ team: 'Bad Team', dates: [] }, 'team: must match'],
    [{ dates: [], date: [] }, 'date: unknown field (did you mean "dates"?)'],
    [{}, 'dates: is required'],
    [{ dates: Array.from({ length: 10_001 }, () => '2026-01-01') }, 'dates: must have at most 10000 items'],
  ])('refuses %j naming the field', (input, message) => {
    const r = parseCalendarBody(input);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.issues.map((i) => i.message).join('\n')).toContain(message);
  });
});

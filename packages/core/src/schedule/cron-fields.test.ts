import { describe, expect, it } from 'vitest';
import { cronProblem, parseCron } from './cron-fields.js';

describe('cronProblem', () => {
  it('answers the same for an expression asked again, valid or not, also after more expressions than it remembers', () => {
    const asked = ['0 2 * * *', '61 * * * *', '@daily', 'garbage'];
    const first = asked.map((e) => cronProblem(e));
    expect(first[0]).toBeNull();
    expect(first[1]).toBe('minute field "61" is out of range 0-59');
    // 5,000 other expressions (more than the 4,096 remembered), half of them invalid.
    for (let i = 0; i < 5_000; i += 1) {
      const expr = `${i % 60} ${Math.floor(i / 60) % 24} ${(i % 2) === 0 ? '*' : '32'} * *`;
      expect(cronProblem(expr) === null).toBe(i % 2 === 0);
    }
    expect(asked.map((e) => cronProblem(e))).toEqual(first);
    expect(asked.map((e) => cronProblem(e))).toEqual(first);
  });

  it.each([
    '* * * * *',
    '*/10 * * * * *',
    '0 9 * JAN-MAR MON-FRI',
    '0 9 * jan-mar mon-fri',
    '5-20/5 8-10 * * *',
    '5/15 * * * *',
    '0,30 2,3 * * *',
    '0 0 L * *',
    '0 0 1,L * *',
    '0 0 * * 5L',
    '0 0 * * FRIL',
    '0 0 * * 1#2',
    '0 0 * * MON#2',
    '0 0 ? * MON',
    '0 0 1 * ?',
    '0 12 29 2 *',
    '0 0 * * 7',
    '  0   2 * * *  ',
    '0\t2 * * *',
    '@daily',
    '@hourly',
  ])('accepts %j', (expr) => {
    expect(cronProblem(expr)).toBeNull();
  });

  it.each([
    ['', 'cron expression is empty'],
    ['   ', 'cron expression is empty'],
    ['* * * * * * *', 'cron expression has 7 fields; expected 5 fields (minute hour day-of-month month day-of-week) or 6 (a leading second field)'],
    ['* * * *', 'cron expression has 4 fields; expected 5 fields (minute hour day-of-month month day-of-week) or 6 (a leading second field)'],
    ['garbage', 'cron expression has 1 field; expected 5 fields (minute hour day-of-month month day-of-week) or 6 (a leading second field)'],
    ['61 * * * *', 'minute field "61" is out of range 0-59'],
    ['5,61 * * * *', 'minute field "5,61" has 61, out of range 0-59'],
    ['60 * * * * *', 'second field "60" is out of range 0-59'],
    ['0 24 * * *', 'hour field "24" is out of range 0-23'],
    ['0 0 0 * *', 'day-of-month field "0" is out of range 1-31'],
    ['0 0 32 * *', 'day-of-month field "32" is out of range 1-31'],
    ['0 0 * 13 *', 'month field "13" is out of range 1-12'],
    ['0 0 * FOO *', 'month field "FOO" has unknown name "FOO"; use 1-12 or JAN-DEC'],
    ['0 0 * * 8', 'day-of-week field "8" is out of range 0-7'],
    ['0 0 * * XYZ', 'day-of-week field "XYZ" has unknown name "XYZ"; use 0-7 or SUN-SAT'],
    ['*/0 * * * *', 'minute field "*/0" has step "0"; a step must be a whole number of at least 1'],
    ['0 5-2 * * *', 'hour field "5-2" has range 5-2, whose start is after its end'],
    ['1,,2 * * * *', 'minute field "1,,2" has an empty list item'],
    ['a b c d e', 'minute field "a" has "a", which is not a number'],
    ['0 L * * *', 'hour field "L" uses L, which only day-of-month (L) and day-of-week (nL) allow'],
    ['0 0 * * L', 'day-of-week field "L" must write L after a weekday (5L = the last Friday of the month)'],
    ['0 ? * * *', 'hour field "?" uses "?", which only the day-of-month and day-of-week fields allow'],
    ['0 0 * * 1#6', 'day-of-week field "1#6" asks for occurrence 6 of a weekday; it must be 1-5'],
    ['0 0 * * 1#2,3', 'day-of-week field "1#2,3" must be a single weekday#k when it uses "#" (no lists, ranges, steps or L)'],
    ['H * * * *', 'minute field "H" uses H (a hashed value), which ax does not support because it differs between processes'],
    ['0 0 30 2 *', 'day-of-month field "30" can never match: no month in month field "2" has such a day'],
    ['@fortnightly', 'cron shorthand "@fortnightly" is unknown; known shorthands are @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly'],
  ])('rejects %j: %s', (expr, problem) => {
    expect(cronProblem(expr)).toBe(problem);
  });

  it('names the field in every rejection of a single bad field', () => {
    const fieldNames = ['second', 'minute', 'hour', 'day-of-month', 'month', 'day-of-week'];
    for (let i = 0; i < 6; i++) {
      const tokens = ['0', '0', '0', '1', '1', '*'];
      tokens[i] = '99';
      expect(cronProblem(tokens.join(' '))).toMatch(new RegExp(`^${fieldNames[i]} field "99" `));
    }
  });
});

describe('parseCron', () => {
  it('gives a 5-field expression a seconds field of [0]', () => {
    const f = parseCron('*/15 1 * * *');
    expect(f.hasSeconds).toBe(false);
    expect(f.seconds).toEqual([0]);
    expect(f.minutes).toEqual([0, 15, 30, 45]);
    expect(f.hours).toEqual([1]);
    expect(f.hourIsWildcard).toBe(false);
  });

  it('treats only a literal * hour as the wildcard of the overlap rule', () => {
    expect(parseCron('30 * * * *').hourIsWildcard).toBe(true);
    expect(parseCron('0 30 * * * *').hourIsWildcard).toBe(true);
    expect(parseCron('30 0-23 * * *').hourIsWildcard).toBe(false);
    expect(parseCron('30 */2 * * *').hourIsWildcard).toBe(false);
  });

  it('reads names, 7 as Sunday, L and #', () => {
    expect(parseCron('0 9 * JAN-MAR MON-FRI').months).toEqual([1, 2, 3]);
    expect(parseCron('0 9 * JAN-MAR MON-FRI').daysOfWeek).toEqual([1, 2, 3, 4, 5]);
    expect(parseCron('0 0 * * 7').daysOfWeek).toEqual([0]);
    expect(parseCron('0 0 L * *').lastDayOfMonth).toBe(true);
    expect(parseCron('0 0 * * 5L').lastWeekdaysOfMonth).toEqual([5]);
    expect(parseCron('0 0 * * 1#2').nthWeekdayOfMonth).toBe(2);
  });

  it('records which day fields are unrestricted, as cron-parser does', () => {
    const both = parseCron('0 0 13 * 5');
    expect([both.dayOfMonthIsWildcard, both.dayOfWeekIsWildcard]).toEqual([false, false]);
    const question = parseCron('0 0 ? * MON');
    expect([question.dayOfMonthIsWildcard, question.dayOfWeekIsWildcard]).toEqual([true, false]);
  });
});

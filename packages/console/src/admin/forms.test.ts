import { describe, expect, it } from 'vitest';
import { calendarBody, calendarForm, calendarRights, defaultTeams, itemsOf, teamChoices, teamsLabel, toggleTeam } from './forms';

describe('admin forms', () => {
  it('offers "*" only to a token of every team, and its own teams to a team token', () => {
    expect(teamChoices({ name: 'a', role: 'admin', teams: ['*'] }, ['ops', 'pay'])).toEqual(['*', 'ops', 'pay']);
    expect(teamChoices({ name: 'a', role: 'admin', teams: ['pay'] }, ['pay'])).toEqual(['pay']);
    expect(defaultTeams({ name: 'a', role: 'admin', teams: ['*'] }, ['ops'])).toEqual(['*']);
    expect(defaultTeams({ name: 'a', role: 'admin', teams: ['pay'] }, ['pay'])).toEqual(['pay']);
    expect(defaultTeams({ name: 'a', role: 'admin', teams: ['pay', 'ops'] }, ['ops', 'pay'])).toEqual([]);
  });

  it('"*" stands alone when ticked, and is dropped when a team is ticked', () => {
    expect(toggleTeam(['ops', 'pay'], '*', true)).toEqual(['*']);
    expect(toggleTeam(['*'], 'ops', true)).toEqual(['ops']);
    expect(toggleTeam(['ops'], 'pay', true)).toEqual(['ops', 'pay']);
    expect(toggleTeam(['ops', 'pay'], 'ops', false)).toEqual(['pay']);
  });

  it('reads items one a line or comma-separated, without blanks or repeats', () => {
    expect(itemsOf(' 2026-12-25\n2026-12-26, 2026-12-25\n\n')).toEqual(['2026-12-25', '2026-12-26']);
    expect(itemsOf('')).toEqual([]);
  });

  it('makes the calendar body from the form and the form from a calendar', () => {
    const cal = { name: 'holidays', team: 'pay', timezone: 'Europe/Paris', dates: ['2026-12-25', '2027-01-01'], version: 2, createdAt: '', updatedAt: '' };
    const form = calendarForm(cal, 'ops');
    expect(form).toEqual({ name: 'holidays', team: 'pay', timezone: 'Europe/Paris', dates: '2026-12-25\n2027-01-01' });
    expect(calendarBody({ ...form, dates: `${form.dates}\n2027-05-01` })).toEqual({ team: 'pay', timezone: 'Europe/Paris', dates: ['2026-12-25', '2027-01-01', '2027-05-01'] });
    expect(calendarForm(undefined, 'ops')).toEqual({ name: '', team: 'ops', timezone: 'UTC', dates: '' });
  });

  it('calendar rights follow the API: viewers read, operators write, admins delete', () => {
    expect(calendarRights({ name: 'v', role: 'viewer' })).toEqual({ write: false, delete: false });
    expect(calendarRights({ name: 'o', role: 'operator' })).toEqual({ write: true, delete: false });
    expect(calendarRights({ name: 'a', role: 'admin' })).toEqual({ write: true, delete: true });
    expect(teamsLabel(['*'])).toBe('every team');
    expect(teamsLabel(['a', 'b'])).toBe('a, b');
  });
});

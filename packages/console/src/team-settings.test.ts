import { describe, expect, it } from 'vitest';
import { hostsOf, mayEditTeams, teamFieldOf, teamForm, teamPatch } from './team-settings';
import type { Team } from './types';

const team: Team = {
  name: 'payments',
  description: 'pay',
  maxRunning: null,
  httpAllow: null,
  alertRoutes: [],
  weight: 1,
  keyVersion: 1,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
};

describe('team settings form', () => {
  it('sends only what changed, numbers as numbers and anything else as typed for the API to judge', () => {
    expect(teamPatch(team, teamForm(team))).toEqual({});
    expect(teamPatch(team, { ...teamForm(team), weight: ' 3 ' })).toEqual({ weight: 3 });
    expect(teamPatch(team, { ...teamForm(team), weight: '0' })).toEqual({ weight: 0 });
    expect(teamPatch(team, { ...teamForm(team), weight: '1.5' })).toEqual({ weight: 1.5 });
    expect(teamPatch(team, { ...teamForm(team), weight: 'x' })).toEqual({ weight: 'x' });
    expect(teamPatch(team, { ...teamForm(team), weight: '' })).toEqual({ weight: '' });
    expect(teamPatch(team, { ...teamForm(team), maxRunning: '20' })).toEqual({ maxRunning: 20 });
    expect(teamPatch({ ...team, maxRunning: 20 }, { ...teamForm(team), maxRunning: '' })).toEqual({ maxRunning: null });
    expect(teamPatch(team, { ...teamForm(team), httpAllow: 'a.internal\n b.internal:8443 ' })).toEqual({ httpAllow: ['a.internal', 'b.internal:8443'] });
    expect(teamPatch({ ...team, httpAllow: ['a.internal'] }, { ...teamForm(team), httpAllow: '' })).toEqual({ httpAllow: null });
  });

  it('reads hosts one a line or comma-separated; none is the global list (null)', () => {
    expect(hostsOf('a, b\n\nc')).toEqual(['a', 'b', 'c']);
    expect(hostsOf(' \n ')).toBeNull();
  });

  it('puts an issue at the field its path starts with', () => {
    expect(teamFieldOf('weight')).toBe('weight');
    expect(teamFieldOf('httpAllow.0')).toBe('httpAllow');
    expect(teamFieldOf('alertRoutes.0.url')).toBeNull();
  });

  it('lets only an admin of every team edit', () => {
    expect(mayEditTeams({ name: 'a', role: 'admin', teams: ['*'] })).toBe(true);
    expect(mayEditTeams({ name: 'a', role: 'admin', teams: ['payments'] })).toBe(false);
    expect(mayEditTeams({ name: 'a', role: 'operator', teams: ['*'] })).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import { hostsOf, mayEditTeams, routeLine, routesOf, teamFieldOf, teamForm, teamPatch } from './team-settings';
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

  it('#47 alert routes: one a line as `URL [format=F] [kinds=K,K]` (as axctl takes them), sent only when changed; none is []', () => {
    const routed: Team = { ...team, alertRoutes: [{ url: 'https://hooks.slack.com/x', format: 'slack', kinds: ['FINAL_FAILURE'] }, { url: 'https://ops.example.com/ax', format: 'generic' }] };
    expect(teamForm(routed).alertRoutes).toBe('https://hooks.slack.com/x format=slack kinds=FINAL_FAILURE\nhttps://ops.example.com/ax');
    expect(teamPatch(routed, teamForm(routed))).toEqual({});
    expect(teamPatch(routed, { ...teamForm(routed), alertRoutes: '' })).toEqual({ alertRoutes: [] });
    expect(teamPatch(team, { ...teamForm(team), alertRoutes: ' https://a.example/h   format=wecom kinds=A,B \n\n' })).toEqual({ alertRoutes: [{ url: 'https://a.example/h', format: 'wecom', kinds: ['A', 'B'] }] });
    expect(routesOf('https://a.example/h colour=red')).toEqual([{ url: 'https://a.example/h', colour: 'red' }]); // the API names it
    expect(routeLine({ url: 'https://b.example/', format: 'generic', kinds: ['X'] })).toBe('https://b.example/ kinds=X');
    expect(teamFieldOf('alertRoutes.0.format')).toBe('alertRoutes');
  });

  it('reads hosts one a line or comma-separated; none is the global list (null)', () => {
    expect(hostsOf('a, b\n\nc')).toEqual(['a', 'b', 'c']);
    expect(hostsOf(' \n ')).toBeNull();
  });

  it('puts an issue at the field its path starts with', () => {
    expect(teamFieldOf('weight')).toBe('weight');
    expect(teamFieldOf('httpAllow.0')).toBe('httpAllow');
    expect(teamFieldOf('alertRoutes.0.url')).toBe('alertRoutes');
    expect(teamFieldOf('name')).toBeNull();
  });

  it('lets only an admin of every team edit', () => {
    expect(mayEditTeams({ name: 'a', role: 'admin', teams: ['*'] })).toBe(true);
    expect(mayEditTeams({ name: 'a', role: 'admin', teams: ['payments'] })).toBe(false);
    expect(mayEditTeams({ name: 'a', role: 'operator', teams: ['*'] })).toBe(false);
  });
});

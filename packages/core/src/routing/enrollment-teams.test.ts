import { describe, expect, it } from 'vitest';
import { routableTeams } from './enrollment-teams.js';
import { servesTeam } from './worker-snapshot.js';

const E = 'enr-eeeeeeeeeee1';
const live = new Map<string, readonly string[]>([
  [E, ['beta']],
  ['enr-aaaaaaaaaaa1', ['*']],
  ['enr-mmmmmmmmmmm1', ['alpha', 'beta']],
]);

describe('R24 an enrolled worker serves the teams of its enrollment, never its own claim', () => {
  it('a worker enrolled for beta that advertises alpha serves nothing; advertising nothing it serves beta', () => {
    expect(routableTeams(`${E}.h1`, ['alpha'], live)).toBeNull();
    expect(routableTeams(`${E}.h1`, [], live)).toEqual(['beta']);
    expect(routableTeams(`${E}.h1`, undefined, live)).toEqual(['beta']);
    expect(routableTeams(`${E}.h1`, ['*'], live)).toEqual(['beta']);
    expect(routableTeams(`${E}.h1`, ['alpha', 'beta'], live)).toEqual(['beta']);
    const teams = routableTeams(`${E}.h1`, ['alpha', 'beta'], live) ?? [];
    expect(servesTeam({ teams }, 'alpha')).toBe(false);
    expect(servesTeam({ teams }, 'beta')).toBe(true);
  });

  it('AX_WORKER_TEAMS narrows an enrollment of several teams or of every team', () => {
    expect(routableTeams('enr-mmmmmmmmmmm1.h', ['alpha'], live)).toEqual(['alpha']);
    expect(routableTeams('enr-aaaaaaaaaaa1.h', ['gamma'], live)).toEqual(['gamma']);
    expect(routableTeams('enr-aaaaaaaaaaa1.h', [], live)).toEqual([]); // every team
  });

  it('a worker of a revoked or unknown enrollment, or of an enrollment without teams, serves nothing', () => {
    expect(routableTeams('enr-rrrrrrrrrrr1.h', [], live)).toBeNull();
    expect(routableTeams('enr-zzzzzzzzzzz1.h', [], new Map([['enr-zzzzzzzzzzz1', []]]))).toBeNull();
  });

  it('an unenrolled worker keeps what it advertises', () => {
    expect(routableTeams('w-1', ['alpha'], live)).toEqual(['alpha']);
    expect(routableTeams('w-1', undefined, live)).toEqual([]);
  });
});

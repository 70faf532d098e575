import { describe, expect, it } from 'vitest';
import { refusalFor } from '../admission.js';
import { EnrollmentKeys } from '../executors/executor-keys.js';
import { describeScope, narrowTeams, parseBootstrapAnswer, refreshedScope, scopeServes, tagsProblem, withLogin } from './bootstrap-answer.js';

const EID = 'enr-abcdefghijk1';
const answer = (over: Record<string, unknown> = {}) => ({
  enrollment: { id: EID, name: 'beta-pool', teams: ['beta'], tags: [] },
  workerIdPrefix: `${EID}.`,
  amqp: { username: `ax.${EID}`, password: 'amqp-pw' },
  redis: { username: `ax.${EID}`, password: 'redis-pw' },
  keys: [
    { team: 'beta', version: 2, key: 'k2' },
    { team: 'beta', version: 1, key: 'k1' },
  ],
  ...over,
});

describe('the bootstrap answer (GET /api/v1/workers/self)', () => {
  it('is parsed with its teams, logins and keys; unknown fields are ignored', () => {
    const parsed = parseBootstrapAnswer({ ...answer(), extra: true });
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.answer.enrollment.teams).toEqual(['beta']);
    expect(parsed.answer.amqp).toEqual({ username: `ax.${EID}`, password: 'amqp-pw' });
    expect(parsed.answer.keys).toHaveLength(2);
  });

  it('accepts "*" among the teams (every team)', () => {
    expect(parseBootstrapAnswer(answer({ enrollment: { id: EID, name: 'shared', teams: ['*'] } })).ok).toBe(true);
  });

  it('refuses what is not an answer, naming the field but never a value', () => {
    for (const [body, where] of [
      [null, 'the body'],
      [answer({ amqp: { username: 'u' } }), 'amqp.password'],
      [answer({ keys: [{ team: 'Beta!', version: 1, key: 'secret-key-value' }] }), 'keys.0.team'],
      [answer({ keys: [{ team: 'beta', version: 0, key: 'secret-key-value' }] }), 'keys.0.version'],
      [answer({ enrollment: { id: 'nope', name: 'x', teams: [] } }), 'enrollment.id'],
      [answer({ workerIdPrefix: 'enr-zzzzzzzzzzzz.' }), 'workerIdPrefix'],
    ] as const) {
      const parsed = parseBootstrapAnswer(body);
      expect(parsed.ok, JSON.stringify(body)).toBe(false);
      if (parsed.ok) continue;
      expect(parsed.problem).toContain(where);
      expect(parsed.problem).not.toContain('secret-key-value');
      expect(parsed.problem).not.toContain('\n');
    }
  });
});

describe('AX_WORKER_TEAMS narrows the enrollment, never widens it (R24)', () => {
  it('empty = every team of the enrollment', () => {
    expect(narrowTeams(['beta', 'alpha'], [])).toEqual({ ok: true, scope: { all: false, teams: ['alpha', 'beta'] } });
    expect(narrowTeams(['*'], [])).toEqual({ ok: true, scope: { all: true } });
  });

  it('a subset narrows; a "*" enrollment may be narrowed to any team', () => {
    expect(narrowTeams(['alpha', 'beta', 'gamma'], ['beta'])).toEqual({ ok: true, scope: { all: false, teams: ['beta'] } });
    expect(narrowTeams(['*'], ['zeta', 'alpha'])).toEqual({ ok: true, scope: { all: false, teams: ['alpha', 'zeta'] } });
  });

  it('a team outside the enrollment, or an enrollment with no teams, is refused', () => {
    const outside = narrowTeams(['beta'], ['alpha', 'beta', 'gamma']);
    expect(outside.ok).toBe(false);
    if (!outside.ok) expect(outside.problem).toBe("teams alpha, gamma are not among the enrollment's (beta): AX_WORKER_TEAMS may only narrow them");
    expect(narrowTeams([], [])).toEqual({ ok: false, problem: 'the enrollment has no teams' });
    expect(narrowTeams([], ['beta']).ok).toBe(false);
  });

  it('after a refresh, teams taken from the enrollment stop being served; added ones are served unless narrowed away', () => {
    expect(refreshedScope(['alpha'], ['alpha', 'beta'])).toEqual({ all: false, teams: ['alpha'] });
    expect(refreshedScope(['gamma'], ['beta'])).toEqual({ all: false, teams: [] });
    expect(refreshedScope(['beta', 'gamma'], [])).toEqual({ all: false, teams: ['beta', 'gamma'] });
    expect(refreshedScope(['*'], ['beta'])).toEqual({ all: false, teams: ['beta'] });
    expect(describeScope({ all: false, teams: [] })).toBe('no team');
  });

  it('an item of a team not served is refused, never run; an unenrolled worker does not check', () => {
    const scope = { all: false as const, teams: ['beta'] };
    const item = { ackDeadline: new Date(Date.now() + 60_000).toISOString(), team: 'alpha' };
    const state = { shuttingDown: false, skewed: false, offsetMs: 0, skewLimitMs: 2_000 };
    const refusal = refusalFor(item, Date.now(), { ...state, teams: scope });
    expect(refusal?.reason).toBe('EXPIRED');
    expect(refusal?.detail).toContain('team alpha is not one this worker serves (beta');
    expect(refusalFor({ ...item, team: 'beta' }, Date.now(), { ...state, teams: scope })).toBeNull();
    expect(refusalFor(item, Date.now(), { ...state, teams: { all: true } })).toBeNull();
    expect(refusalFor(item, Date.now(), state)).toBeNull();
    expect(scopeServes({ all: true }, 'anything')).toBe(true);
  });
});

describe('AX_WORKER_TAGS of an enrolled worker', () => {
  it('may offer only the enrollment\'s tags when it names any', () => {
    expect(tagsProblem([], ['gpu', 'ssd'])).toBeUndefined();
    expect(tagsProblem(undefined, ['gpu'])).toBeUndefined();
    expect(tagsProblem(['gpu', 'ssd'], ['gpu'])).toBeUndefined();
    expect(tagsProblem(['gpu'], [])).toBeUndefined();
    expect(tagsProblem(['gpu'], ['gpu', 'pci'])).toBe("tag pci is not among the enrollment's (gpu)");
  });
});

describe('logins and keys of the answer', () => {
  it('withLogin keeps the host and replaces any userinfo', () => {
    expect(withLogin('amqp://guest:guest@rabbit-0:5672/vh', `ax.${EID}`, 'p/w+=')).toBe(`amqp://ax.${EID}:p%2Fw%2B%3D@rabbit-0:5672/vh`);
    expect(withLogin('redis://127.0.0.1:6379/2', `ax.${EID}`, 'pw')).toBe(`redis://ax.${EID}:pw@127.0.0.1:6379/2`);
  });

  it('the keyring holds exactly the keys of the last answer', async () => {
    let asked = 0;
    const keys = new EnrollmentKeys(EID, answer().keys, () => {
      asked += 1;
      keys.replace([{ team: 'beta', version: 3, key: 'k3' }]);
      return Promise.resolve();
    });
    expect(keys.keyOf('beta', 2)).toBe('k2');
    expect(keys.keyOf('beta', 1)).toBe('k1');
    expect(keys.keyOf('alpha', 2)).toBeUndefined();
    await Promise.all([keys.refresh(), keys.refresh()]);
    expect(asked).toBe(1);
    expect(keys.keyOf('beta', 3)).toBe('k3');
    expect(keys.keyOf('beta', 2)).toBeUndefined();
    expect(keys.missing('alpha', 1)).toContain(`enrollment ${EID} holds no executor key for team alpha version 1`);
  });
});

/** AX_OIDC_ROLE_MAP and the AX_OIDC_* settings (pure): bad entries named, grants combined. */
import { expect, it } from 'vitest';
import { oidcSettingsOf, type SignInConfig } from './oidc-config.js';
import { claimValues, grantOf, parseRoleMap, type RoleMap } from './oidc-role-map.js';

function map(text: string): RoleMap {
  const parsed = parseRoleMap(text);
  if (!parsed.ok) throw new Error(parsed.problem);
  return parsed.value;
}

it('maps payments-ops to an operator of payments only', () => {
  const roles = map('{"payments-ops": {"role": "operator", "teams": ["payments"]}, "platform-admins": {"role": "admin", "teams": ["*"]}}');
  expect(grantOf(roles, ['payments-ops', 'everyone'])).toEqual({ role: 'operator', teams: ['payments'] });
  expect(grantOf(roles, ['everyone'])).toBeNull();
  expect(grantOf(roles, ['payments-ops', 'platform-admins'])).toEqual({ role: 'admin', teams: '*' });
});

it('combines several entries: the highest role, the union of teams', () => {
  const roles = map('{"a": {"role": "viewer", "teams": ["orders"]}, "b": {"role": "operator", "teams": ["payments"]}}');
  expect(grantOf(roles, ['a', 'b'])).toEqual({ role: 'operator', teams: ['orders', 'payments'] });
});

it('names the bad entry and field', () => {
  const problem = (text: string) => {
    const parsed = parseRoleMap(text);
    return parsed.ok ? 'ok' : parsed.problem;
  };
  expect(problem('{"payments-ops": {"role": "root", "teams": ["payments"]}}')).toBe('entry "payments-ops": role must be one of viewer, operator, admin (got "root")');
  expect(problem('{"payments-ops": {"role": "operator", "teams": ["Payments!"]}}')).toContain('entry "payments-ops": teams: "Payments!" is not a team name');
  expect(problem('{"payments-ops": {"role": "operator", "teams": []}}')).toContain('entry "payments-ops": teams must be a non-empty list');
  expect(problem('{"ops": {"role": "operator", "teams": ["a"], "team": "b"}}')).toContain('entry "ops": unknown field "team"');
  expect(problem('{"ops": "operator"}')).toContain('entry "ops": expected {"role", "teams"}');
  expect(problem('[1]')).toContain('expected a JSON object');
  expect(problem('{}')).toContain('empty');
  expect(problem('{nope')).toContain('not JSON');
});

it('reads a claim given as a list or as one string', () => {
  expect(claimValues(['a', 1, 'b'])).toEqual(['a', 'b']);
  expect(claimValues('a')).toEqual(['a']);
  expect(claimValues(undefined)).toEqual([]);
});

const base: SignInConfig = {
  sessionIdleSeconds: 3600,
  sessionMaxSeconds: 43200,
  oidcIssuer: undefined,
  oidcClientId: undefined,
  oidcClientSecret: undefined,
  oidcRedirectUri: undefined,
  oidcScopes: 'openid',
  oidcClaim: 'groups',
  oidcRoleMap: undefined,
};

it('needs the client, the callback and the role map once an issuer is set, naming each', () => {
  expect(oidcSettingsOf(base)).toEqual({ ok: true, value: null });
  const missing = oidcSettingsOf({ ...base, oidcIssuer: 'https://id.example.com' });
  expect(missing.ok).toBe(false);
  const problems = missing.ok ? [] : missing.problems.join('\n');
  for (const v of ['AX_OIDC_CLIENT_ID', 'AX_OIDC_CLIENT_SECRET', 'AX_OIDC_REDIRECT_URI', 'AX_OIDC_ROLE_MAP']) expect(problems).toContain(v);
  const stray = oidcSettingsOf({ ...base, oidcClientId: 'x' });
  expect(stray.ok ? '' : stray.problems[0]).toContain('AX_OIDC_CLIENT_ID is set but AX_OIDC_ISSUER is not');
  const wrongPath = oidcSettingsOf({
    ...base,
    oidcIssuer: 'https://id.example.com',
    oidcClientId: 'c',
    oidcClientSecret: 's',
    oidcRedirectUri: 'https://ax.example.com/callback',
    oidcRoleMap: map('{"g": {"role": "viewer", "teams": ["*"]}}'),
  });
  expect(wrongPath.ok ? '' : wrongPath.problems[0]).toContain('must end with /api/v1/auth/oidc/callback');
});

/**
 * `AX_OIDC_ROLE_MAP`: which values of the OIDC role claim (`AX_OIDC_CLAIM`, default `groups`)
 * grant which role and teams in the console. A JSON object from claim value to
 * `{"role": "viewer"|"operator"|"admin", "teams": ["payments", …] | ["*"]}`. Pure: parsed and
 * checked once at start (a bad entry stops the service with its name), applied to a session's
 * claim values on every request (so an entry removed from the map ends the sessions it granted).
 */
import { z } from 'zod';
import { TEAM_NAME_PATTERN } from '@ax/core';
import type { EnvField } from '@ax/kit';
import { ROLES, type Role } from './auth.js';
import type { TeamScope } from './team-scope.js';

/** What one claim value grants. */
export interface RoleGrant {
  readonly role: Role;
  /** Team names, or `['*']` (every team). */
  readonly teams: readonly string[];
}

/** Claim value → grant. */
export type RoleMap = ReadonlyMap<string, RoleGrant>;

/** Parses the map; the error names the entry and field that is wrong. */
export function parseRoleMap(text: string): { ok: true; value: RoleMap } | { ok: false; problem: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    return { ok: false, problem: `not JSON (${err instanceof Error ? err.message : String(err)})` };
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { ok: false, problem: 'expected a JSON object from claim value to {"role", "teams"}' };
  const map = new Map<string, RoleGrant>();
  for (const [value, grant] of Object.entries(raw as Record<string, unknown>)) {
    const at = `entry ${JSON.stringify(value)}`;
    if (value === '') return { ok: false, problem: `${at}: the claim value is empty` };
    if (typeof grant !== 'object' || grant === null || Array.isArray(grant)) return { ok: false, problem: `${at}: expected {"role", "teams"}` };
    const { role, teams, ...rest } = grant as Record<string, unknown>;
    const extra = Object.keys(rest)[0];
    if (extra !== undefined) return { ok: false, problem: `${at}: unknown field ${JSON.stringify(extra)} (expected role and teams)` };
    if (typeof role !== 'string' || !(ROLES as readonly string[]).includes(role)) {
      return { ok: false, problem: `${at}: role must be one of ${ROLES.join(', ')} (got ${JSON.stringify(role)})` };
    }
    if (!Array.isArray(teams) || teams.length === 0) return { ok: false, problem: `${at}: teams must be a non-empty list of team names, or ["*"] for every team` };
    for (const team of teams) {
      if (team === '*') continue;
      if (typeof team !== 'string' || !TEAM_NAME_PATTERN.test(team)) {
        return { ok: false, problem: `${at}: teams: ${JSON.stringify(team)} is not a team name (${String(TEAM_NAME_PATTERN)}) or "*"` };
      }
    }
    map.set(value, { role: role as Role, teams: teams as string[] });
  }
  if (map.size === 0) return { ok: false, problem: 'the map is empty: nobody could sign in' };
  return { ok: true, value: map };
}

/**
 * What the claim values grant together: the highest role among the matching entries and the
 * union of their teams (`*` if any grants every team); null when none matches. A user in a
 * viewer group of one team and an admin group of another is an admin of both (one principal has
 * one role): map groups accordingly.
 */
export function grantOf(map: RoleMap, claimValues: readonly string[]): { role: Role; teams: TeamScope } | null {
  let role: Role | null = null;
  const teams = new Set<string>();
  for (const value of claimValues) {
    const grant = map.get(value);
    if (grant === undefined) continue;
    if (role === null || ROLES.indexOf(grant.role) > ROLES.indexOf(role)) role = grant.role;
    for (const team of grant.teams) teams.add(team);
  }
  if (role === null) return null;
  return { role, teams: teams.has('*') ? '*' : [...teams].sort() };
}

/** The claim's values as strings: a list, or one string (some providers send a single group so). */
export function claimValues(claim: unknown): readonly string[] {
  if (typeof claim === 'string') return [claim];
  if (Array.isArray(claim)) return claim.filter((v): v is string => typeof v === 'string');
  return [];
}

const EXPECTED = 'a JSON object from claim value to {"role": "viewer"|"operator"|"admin", "teams": ["team", …] or ["*"]}';

/** `AX_OIDC_ROLE_MAP` (or `AX_OIDC_ROLE_MAP_FILE`): unset = undefined. */
export function roleMapField(): EnvField<RoleMap | undefined> {
  return {
    env: 'AX_OIDC_ROLE_MAP',
    expected: EXPECTED,
    // Not a secret, but 'url' allows the _FILE form (a mounted ConfigMap) and masks nothing it holds.
    sensitivity: 'url',
    schema: () =>
      z
        .string()
        .optional()
        .transform((raw, ctx): RoleMap | undefined => {
          if (raw === undefined) return undefined;
          const parsed = parseRoleMap(raw);
          if (parsed.ok) return parsed.value;
          ctx.addIssue({ code: 'custom', message: `expected ${EXPECTED}: ${parsed.problem}` });
          return z.NEVER;
        }),
  };
}

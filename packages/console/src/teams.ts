/**
 * Teams in the console: what the signed-in token covers (from `GET /api/v1/whoami`) and the
 * teams to filter by (`GET /api/v1/teams`, which lists only the token's teams). The API keeps
 * other teams out of every answer; the console only narrows further (`?team=`).
 */
import type { Page } from './api';
import type { Principal, Team } from './types';
import { useApi } from './use-api';

/** `all teams` for a token of every team (`["*"]`), else `teams: a, b`; null when the API did not say. */
export function teamsText(principal: Principal): string | null {
  const teams = principal.teams;
  if (teams === undefined) return null;
  if (teams.includes('*')) return 'all teams';
  return `teams: ${teams.length === 0 ? 'none' : teams.join(', ')}`;
}

/** The most teams one select offers (the API's largest page). */
const TEAMS_PAGE = 500;

/** The names of the teams the token covers, by name; undefined while loading. */
export function useTeamNames(): { names: string[] | undefined; error: string | null } {
  const teams = useApi<Page<Team>>('/api/v1/teams', { limit: TEAMS_PAGE }, { refreshMs: 60_000 });
  return { names: teams.data?.items.map((t) => t.name), error: teams.error };
}

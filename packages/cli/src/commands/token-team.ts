/**
 * The team `apply` and `tasks apply` put a task without `team:` into when `--team` (AX_TEAM) is
 * not given: the token's only team, when it covers exactly one (issue #47: a team token's apply
 * tripped on the API's default, team `default`, which it does not cover); else none, and the API's
 * default applies.
 */
import type { WhoAmI } from '@ax/api-types';
import type { Ctx } from '../command.js';

/** The teams the token covers (`["*"]`: every team). */
export async function tokenTeams(ctx: Ctx): Promise<readonly string[]> {
  const { body } = await ctx.client.get<WhoAmI>('/api/v1/whoami');
  return body.teams ?? [];
}

export async function applyTeam(ctx: Ctx, known?: readonly string[]): Promise<string | undefined> {
  if (ctx.team !== undefined) return ctx.team;
  const teams = known ?? (await tokenTeams(ctx));
  const only = teams.length === 1 ? teams[0] : undefined;
  return only === '*' ? undefined : only;
}

/** `axctl teams list|show|create`: the teams the token covers (ADMIN-API.md "Teams"). */
import type { TaskPage, Team, TeamPage } from '@ax/api-types';
import { integer, positionals, stringOption, UsageError } from '../args.js';
import { ApiRequestError } from '../client.js';
import { printJson, printMore, type CommandSpec, type Ctx } from '../command.js';
import { formatKeyValues, formatTable } from '../table.js';

/** `^[a-z][a-z0-9_-]{0,63}$` (ADMIN-API.md "Teams"). */
const TEAM_NAME = /^[a-z][a-z0-9_-]{0,63}$/;

/** A team name given on the command line, or a usage error naming where it came from. */
export function teamName(where: string, value: string): string {
  if (!TEAM_NAME.test(value)) throw new UsageError(`${where}: expected a team name (a-z first, then a-z 0-9 _ -, at most 64), got ${JSON.stringify(value)}`);
  return value;
}

const maxRunningText = (t: Team): string => (t.maxRunning === null ? 'no limit' : String(t.maxRunning));

const list: CommandSpec = {
  name: 'teams list',
  synopsis: '[--limit N] [--cursor C]',
  summary: 'List the teams the token covers, by name.',
  options: {
    limit: { type: 'string', value: 'N', help: 'page size, 1..500 (default 50)' },
    cursor: { type: 'string', value: 'C', help: 'next page (printed after a full page)' },
  },
  run: async (ctx, args) => {
    positionals(args, [], ctx.command);
    const limit = stringOption(args, 'limit');
    const { body } = await ctx.client.get<TeamPage>('/api/v1/teams', {
      limit: limit === undefined ? undefined : integer('limit', limit, 1, 500),
      cursor: stringOption(args, 'cursor'),
    });
    if (ctx.json) return printJson(ctx, body);
    formatTable<Team>(
      [
        { header: 'name', value: (t) => t.name },
        { header: 'max running', value: maxRunningText, align: 'right' },
        { header: 'key version', value: (t) => t.keyVersion, align: 'right' },
        { header: 'description', value: (t) => t.description, maxWidth: 60 },
      ],
      body.items,
    ).forEach((l) => ctx.io.out(l));
    printMore(ctx, body.nextCursor);
  },
};

/** The team of that name among those the token covers (the API has no GET of one team). */
async function findTeam(ctx: Ctx, name: string): Promise<Team> {
  let cursor: string | undefined;
  for (;;) {
    const { body } = await ctx.client.get<TeamPage>('/api/v1/teams', { limit: 500, cursor });
    const found = body.items.find((t) => t.name === name);
    if (found !== undefined) return found;
    if (body.nextCursor === null || body.items.every((t) => t.name > name)) break;
    cursor = body.nextCursor;
  }
  // The API's own answer for what the token does not cover: as if it did not exist.
  throw new ApiRequestError(404, 'NOT_FOUND', `team ${JSON.stringify(name)} does not exist`, {});
}

const show: CommandSpec = {
  name: 'teams show',
  synopsis: '<name>',
  summary: 'Show one team (of those the token covers) and how many of its tasks the token sees.',
  options: {},
  run: async (ctx, args) => {
    const [raw] = positionals(args, ['name'], ctx.command) as [string];
    const team = await findTeam(ctx, teamName('<name>', raw));
    if (ctx.json) return printJson(ctx, team);
    const { body: tasks } = await ctx.client.get<TaskPage>('/api/v1/tasks', { team: team.name, limit: 500 });
    formatKeyValues([
      ['name', team.name],
      ['description', team.description],
      ['max running', maxRunningText(team)],
      ['key version', team.keyVersion],
      ['tasks', tasks.nextCursor === null ? tasks.items.length : `${tasks.items.length}+`],
      ['created', team.createdAt],
      ['updated', team.updatedAt],
    ]).forEach((l) => ctx.io.out(l));
  },
};

const create: CommandSpec = {
  name: 'teams create',
  synopsis: '<name> [--description TEXT] [--max-running N]',
  summary: 'Create a team (executor key version 1); needs an admin token of every team ("*").',
  options: {
    description: { type: 'string', value: 'TEXT', help: 'what the team is' },
    'max-running': { type: 'string', value: 'N', help: 'most DISPATCHED or RUNNING instances of the team at once (default: no limit)' },
  },
  notes: ["Then: tokens for its people (POST /api/v1/tokens with \"teams\"), its executor key (GET /api/v1/teams/<name>/executor-key); see docs/teams.md."],
  run: async (ctx, args) => {
    const [raw] = positionals(args, ['name'], ctx.command) as [string];
    const name = teamName('<name>', raw);
    const description = stringOption(args, 'description');
    const maxRunning = stringOption(args, 'max-running');
    const { body } = await ctx.client.post<Team>('/api/v1/teams', {
      json: {
        name,
        ...(description === undefined ? {} : { description }),
        ...(maxRunning === undefined ? {} : { maxRunning: integer('max-running', maxRunning, 1, 1_000_000) }),
      },
    });
    if (ctx.json) return printJson(ctx, body);
    ctx.io.out(`team ${body.name} created (max running ${maxRunningText(body)}, key version ${body.keyVersion})`);
  },
};

export const teamCommands: readonly CommandSpec[] = [list, show, create];

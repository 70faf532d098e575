/** `axctl teams list|show|create|update|delete|executor-key|rotate-key`: the teams the token covers (ADMIN-API.md "Teams"). */
import type { ResponseOf, TaskPage, Team, TeamPage } from '@ax/api-types';
import { flag, integer, listOption, positionals, stringOption, UsageError, type ParsedArgs } from '../args.js';
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

/** The teams of a repeatable `--team` (`tokens create`, `workers enroll`), else AX_TEAM; `*` = every team. */
export function teamsOf(ctx: Ctx, values: readonly string[]): string[] {
  const given = values.length > 0 ? values : ctx.team === undefined ? [] : [ctx.team];
  if (given.length === 0) throw new UsageError(`${ctx.command}: --team is required (a team name, repeatable, or "*" for every team; see axctl ${ctx.command} --help)`);
  return given.map((t) => (t === '*' ? t : teamName('--team', t)));
}

const maxRunningText = (t: Team): string => (t.maxRunning === null ? 'no limit' : String(t.maxRunning));
const httpAllowText = (t: Team): string => (t.httpAllow === null ? 'the global list' : t.httpAllow.length === 0 ? 'none' : t.httpAllow.join(', '));

/** `slack https://host/*** (FINAL_FAILURE)`, one per route (whole URLs to an admin only, as the API answers). */
const alertRoutesText = (t: Team): string =>
  t.alertRoutes.length === 0 ? "the platform's webhook only" : t.alertRoutes.map((r) => `${r.format} ${r.url}${r.kinds === undefined ? '' : ` (${r.kinds.join(', ')})`}`).join('; ');

/** Most weight a team may have (the API's bound). */
const MAX_WEIGHT = 1000;

/** Options shared by `teams create` and `teams update`. */
const settingOptions = {
  description: { type: 'string', value: 'TEXT', help: 'what the team is' },
  'max-running': { type: 'string', value: 'N', help: 'most DISPATCHED or RUNNING instances of the team at once (default: no limit)' },
  weight: { type: 'string', value: 'N', help: "the team's share of contended worker slots against other teams' (DESIGN R23; default 1)" },
  'http-allow': {
    type: 'string',
    value: 'HOST',
    multiple: true,
    help: "a host the team's http tasks may call (repeat it); narrows the global AX_HTTP_EXECUTOR_ALLOW, never widens it",
  },
  'alert-route': {
    type: 'string',
    value: "'URL [format=F] [kinds=K,K]'",
    multiple: true,
    help: "a webhook the team's alerts go to besides the platform's (repeat it; replaces the team's list): format generic (default), slack, dingtalk or wecom; kinds: only those alert kinds",
  },
} as const;

/**
 * One `--alert-route` value: `URL`, then `format=F` and `kinds=K,K` in any order, separated by
 * spaces (a URL holds none). Which formats and kinds exist is the API's to judge.
 */
export function alertRoute(value: string): Record<string, unknown> {
  const [url, ...rest] = value.trim().split(/\s+/);
  if (url === undefined || url === '' || url.includes('=')) throw new UsageError(`--alert-route: expected 'URL [format=F] [kinds=K,K]', got ${JSON.stringify(value)}`);
  const route: Record<string, unknown> = { url };
  for (const part of rest) {
    const [key, v] = [part.slice(0, part.indexOf('=')), part.slice(part.indexOf('=') + 1)];
    if (key === 'format' && v !== '' && route['format'] === undefined) route['format'] = v;
    else if (key === 'kinds' && v !== '' && route['kinds'] === undefined) route['kinds'] = v.split(',').filter((k) => k !== '');
    else throw new UsageError(`--alert-route: ${JSON.stringify(part)}: expected format=F or kinds=K,K (once each) after the URL`);
  }
  return route;
}

/** The body fields of the options of {@link settingOptions} that were given. */
function settingsBody(args: ParsedArgs): Record<string, unknown> {
  const description = stringOption(args, 'description');
  const maxRunning = stringOption(args, 'max-running');
  const weight = stringOption(args, 'weight');
  const httpAllow = listOption(args, 'http-allow');
  const alertRoutes = listOption(args, 'alert-route').map(alertRoute);
  return {
    ...(description === undefined ? {} : { description }),
    ...(maxRunning === undefined ? {} : { maxRunning: integer('max-running', maxRunning, 1, 1_000_000) }),
    ...(weight === undefined ? {} : { weight: integer('weight', weight, 1, MAX_WEIGHT) }),
    ...(httpAllow.length === 0 ? {} : { httpAllow }),
    ...(alertRoutes.length === 0 ? {} : { alertRoutes }),
  };
}

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
        { header: 'weight', value: (t) => t.weight, align: 'right' },
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
      ['weight', team.weight],
      ['http allow', httpAllowText(team)],
      ['alert hooks', alertRoutesText(team)],
      ['key version', team.keyVersion],
      ['tasks', tasks.nextCursor === null ? tasks.items.length : `${tasks.items.length}+`],
      ['created', team.createdAt],
      ['updated', team.updatedAt],
    ]).forEach((l) => ctx.io.out(l));
  },
};

const create: CommandSpec = {
  name: 'teams create',
  synopsis: "<name> [--description TEXT] [--max-running N] [--weight N] [--http-allow HOST]... [--alert-route 'URL …']...",
  summary: 'Create a team (executor key version 1); needs an admin token of every team ("*").',
  options: settingOptions,
  notes: ["Then: tokens for its people (axctl tokens create NAME --role R --team <name>), its executor key (GET /api/v1/teams/<name>/executor-key); see docs/teams.md."],
  run: async (ctx, args) => {
    const [raw] = positionals(args, ['name'], ctx.command) as [string];
    const name = teamName('<name>', raw);
    const { body } = await ctx.client.post<Team>('/api/v1/teams', { json: { name, ...settingsBody(args) } });
    if (ctx.json) return printJson(ctx, body);
    ctx.io.out(`team ${body.name} created (max running ${maxRunningText(body)}, weight ${body.weight}, key version ${body.keyVersion})`);
  },
};

const update: CommandSpec = {
  name: 'teams update',
  synopsis: "<name> [--description TEXT] [--max-running N | --no-max-running] [--weight N] [--http-allow HOST]... [--global-http-allow] [--alert-route 'URL …']... [--no-alert-routes]",
  summary: 'Change a team\'s description, run limit, weight, HTTP allowlist or alert routes; needs an admin token of every team ("*").',
  options: {
    ...settingOptions,
    'no-max-running': { type: 'boolean', help: 'remove the run limit' },
    'global-http-allow': { type: 'boolean', help: "drop the team's own allowlist: its http tasks may call what AX_HTTP_EXECUTOR_ALLOW allows" },
    'no-alert-routes': { type: 'boolean', help: "drop the team's alert routes: its alerts go to the platform's webhook only" },
  },
  notes: [
    'A changed weight, run limit or allowlist applies to the next claim round of every broker.',
    "--alert-route replaces the team's whole list: e.g. --alert-route 'https://hooks.slack.com/services/T/B/x format=slack kinds=FINAL_FAILURE,SLA_MISS'.",
  ],
  run: async (ctx, args) => {
    const [raw] = positionals(args, ['name'], ctx.command) as [string];
    const name = teamName('<name>', raw);
    const body = settingsBody(args);
    if (flag(args, 'no-max-running')) {
      if ('maxRunning' in body) throw new UsageError('--max-running and --no-max-running: give one of them');
      body['maxRunning'] = null;
    }
    if (flag(args, 'global-http-allow')) {
      if ('httpAllow' in body) throw new UsageError('--http-allow and --global-http-allow: give one of them');
      body['httpAllow'] = null;
    }
    if (flag(args, 'no-alert-routes')) {
      if ('alertRoutes' in body) throw new UsageError('--alert-route and --no-alert-routes: give one of them');
      body['alertRoutes'] = [];
    }
    if (Object.keys(body).length === 0) throw new UsageError('teams update: nothing to change (give --description, --max-running, --weight, --http-allow or --alert-route)');
    const { body: team } = await ctx.client.patch<Team>(`/api/v1/teams/${encodeURIComponent(name)}`, { json: body });
    if (ctx.json) return printJson(ctx, team);
    ctx.io.out(`team ${team.name} updated (max running ${maxRunningText(team)}, weight ${team.weight}, http allow ${httpAllowText(team)})`);
  },
};

const remove: CommandSpec = {
  name: 'teams delete',
  synopsis: '<name>',
  summary: 'Delete a team that owns no task; needs an admin token of every team ("*").',
  options: {},
  notes: [
    'The team is taken off every token and worker enrollment naming it; a token left with no team is revoked.',
    'A team created again under the name is a new team: nothing of the old one (tokens, keys, enrollments) acts for it.',
    'A team that owns tasks, and team "default", are refused (409 INVALID_STATE).',
  ],
  run: async (ctx, args) => {
    const [raw] = positionals(args, ['name'], ctx.command) as [string];
    const name = teamName('<name>', raw);
    await ctx.client.request('DELETE', `/api/v1/teams/${encodeURIComponent(name)}`);
    if (ctx.json) return printJson(ctx, { name, deleted: true });
    ctx.io.out(`team ${name} deleted: taken off every token and worker enrollment naming it`);
  },
};

/** The answer of `GET /api/v1/teams/{name}/executor-key` and of a rotation. */
type ExecutorKey = ResponseOf<'GET /api/v1/teams/{name}/executor-key'>;

function printKey(ctx: Ctx, k: ExecutorKey, what: string): void {
  if (ctx.json) return printJson(ctx, k);
  const grace = k.previousValidUntil === undefined ? '' : `; version ${k.keyVersion - 1} verifies until ${k.previousValidUntil}`;
  ctx.io.out(`team ${k.team}: ${what} key version ${k.keyVersion}${grace}`);
  ctx.io.out(`key: ${k.key}`);
}

const executorKey: CommandSpec = {
  name: 'teams executor-key',
  synopsis: '<name>',
  summary: "Print the team's current executor key, for its HTTP service; needs an admin token of that team (audited).",
  options: {},
  notes: ["Put it in the team's service (its secret store), never in a task definition; see docs/http-executors.md."],
  run: async (ctx, args) => {
    const [raw] = positionals(args, ['name'], ctx.command) as [string];
    const name = teamName('<name>', raw);
    const { body } = await ctx.client.get<ExecutorKey>(`/api/v1/teams/${encodeURIComponent(name)}/executor-key`);
    printKey(ctx, body, 'current');
  },
};

const rotateKey: CommandSpec = {
  name: 'teams rotate-key',
  synopsis: '<name>',
  summary: "Rotate the team's executor key to the next version and print it; the previous one verifies for AX_EXECUTOR_KEY_GRACE_S more.",
  options: {},
  notes: ['Give the service the new key before the grace ends (the SDK takes both versions: keys: { <version>: <key> }).'],
  run: async (ctx, args) => {
    const [raw] = positionals(args, ['name'], ctx.command) as [string];
    const name = teamName('<name>', raw);
    const { body } = await ctx.client.post<ExecutorKey>(`/api/v1/teams/${encodeURIComponent(name)}/executor-keys`);
    printKey(ctx, body, 'new');
  },
};

export const teamCommands: readonly CommandSpec[] = [list, show, create, update, remove, executorKey, rotateKey];

/**
 * `axctl tokens list|create|revoke`: API tokens (ADMIN-API.md "Endpoints", `/api/v1/tokens`;
 * admin). The secret of a new token is in the API's answer once: `create` prints it once, on a
 * line of its own, or `--json` prints that answer. Which teams a token may be made for is the
 * API's to decide (a team admin: its own teams only); its refusal is the one error line.
 */
import type { ApiToken, ResponseOf } from '@ax/api-types';
import { integer, listOption, positionals, requiredOption, stringOption, UsageError } from '../args.js';
import { printJson, printMore, type CommandSpec } from '../command.js';
import { formatTable } from '../table.js';
import { teamsOf } from './teams.js';

/** The answer of `POST /api/v1/tokens`: the token with its secret (shown once). */
type CreatedApiToken = ResponseOf<'POST /api/v1/tokens'>;

const ROLES = ['viewer', 'operator', 'admin'] as const;

/** A token id: digits (the API answers 404 to anything else). */
const TOKEN_ID = /^\d{1,20}$/;

const teamsText = (teams: readonly string[]): string => (teams.includes('*') ? 'every team (*)' : teams.join(', '));

const list: CommandSpec = {
  name: 'tokens list',
  synopsis: '[--limit N] [--cursor C]',
  summary: "List the API tokens within the token's teams, newest first, without their secrets (an admin token).",
  options: {
    limit: { type: 'string', value: 'N', help: 'page size, 1..500 (default 50)' },
    cursor: { type: 'string', value: 'C', help: 'next page (printed after a full page)' },
  },
  notes: ['Revoked tokens are listed too, with when (REVOKED); a live one shows -.'],
  run: async (ctx, args) => {
    positionals(args, [], ctx.command);
    const limit = stringOption(args, 'limit');
    const { body } = await ctx.client.get<ResponseOf<'GET /api/v1/tokens'>>('/api/v1/tokens', {
      limit: limit === undefined ? undefined : integer('limit', limit, 1, 500),
      cursor: stringOption(args, 'cursor'),
    });
    if (ctx.json) return printJson(ctx, body);
    formatTable<ApiToken>(
      [
        { header: 'id', value: (t) => t.id, align: 'right' },
        { header: 'name', value: (t) => t.name },
        { header: 'role', value: (t) => t.role },
        { header: 'teams', value: (t) => t.teams },
        { header: 'created', value: (t) => t.createdAt },
        { header: 'last used', value: (t) => t.lastUsedAt },
        { header: 'revoked', value: (t) => t.revokedAt },
      ],
      body.items,
    ).forEach((l) => ctx.io.out(l));
    printMore(ctx, body.nextCursor);
  },
};

const create: CommandSpec = {
  name: 'tokens create',
  synopsis: '<name> --role viewer|operator|admin --team T [--team T2 …]',
  summary: 'Create an API token for teams and print its secret once; an admin of some teams may create tokens for those teams only.',
  options: {
    role: { type: 'string', value: 'ROLE', help: 'viewer (reads), operator (also triggers, reruns, edits) or admin (also deletes, tokens, teams)' },
    team: { type: 'string', value: 'T', multiple: true, help: 'a team the token acts for, or "*" for every team (default: AX_TEAM)' },
  },
  notes: [
    'The secret is shown this once (the server keeps only its hash): store it now, e.g. as AX_TOKEN.',
    '--json prints the API\'s answer, the secret in "token". Names are unique among live tokens.',
  ],
  run: async (ctx, args) => {
    const [name] = positionals(args, ['name'], ctx.command) as [string];
    if (name.trim() === '') throw new UsageError(`${ctx.command}: <name>: must not be empty`);
    const role = requiredOption(args, 'role', ctx.command);
    if (!(ROLES as readonly string[]).includes(role)) throw new UsageError(`--role: expected viewer, operator or admin, got ${JSON.stringify(role)}`);
    const teams = teamsOf(ctx, listOption(args, 'team'));
    const { body } = await ctx.client.post<CreatedApiToken>('/api/v1/tokens', { json: { name, role, teams } });
    if (ctx.json) return printJson(ctx, body);
    ctx.io.out(`token ${body.id} (${body.name}, ${body.role}) for ${teamsText(body.teams)}`);
    ctx.io.out(`secret (shown once; store it now): ${body.token}`);
  },
};

const revoke: CommandSpec = {
  name: 'tokens revoke',
  synopsis: '<id>',
  summary: 'Revoke an API token at once (its id, from `tokens list`): it is refused from now on and its log streams end.',
  options: {},
  run: async (ctx, args) => {
    const [id] = positionals(args, ['id'], ctx.command) as [string];
    if (!TOKEN_ID.test(id)) throw new UsageError(`${ctx.command}: <id>: expected a token id (digits, see axctl tokens list), got ${JSON.stringify(id)}`);
    await ctx.client.request('DELETE', `/api/v1/tokens/${id}`);
    if (ctx.json) return printJson(ctx, { id, revoked: true });
    ctx.io.out(`token ${id} revoked: it is refused from now on and its log streams end`);
  },
};

export const tokenCommands: readonly CommandSpec[] = [list, create, revoke];

/** Admin endpoints: audit log and API tokens, each confined to the caller's teams. */
import { z } from 'zod';
import { TEAM_NAME_PATTERN } from '@ax/core';
import { existingTeams, getApiToken, insertApiToken, listApiTokens, listAuditEntries, revokeApiToken, type ApiTokenRecord } from '@ax/store';
import { audit } from '../audit.js';
import { BOOTSTRAP_TOKEN_NAME, ROLES, generateToken, hashToken, type Principal } from '../auth.js';
import { ApiError, notFound, validationFailed } from '../errors.js';
import { coversAllTeams, coversTeam, visibleTeams } from '../team-scope.js';
import { decodeCursor, pageOf, pageQueryShape } from '../pagination.js';
import { defineRoute, type RouteSpec } from '../route.js';
import { idParams, instantSchema, listOf } from '../schemas.js';
import { writeTransaction } from '../write-transaction.js';

const auditEntrySchema = z.object({
  id: z.string(),
  at: z.string(),
  actor: z
    .object({
      tokenId: z.string().nullable().describe('the id of the actor token (null: an HMAC caller `executor:<team>`, or an entry from before ids were recorded)'),
      name: z.string().describe('the token name at the time (names are unique among live tokens only: tokenId identifies)'),
    })
    .describe('who did it'),
  actorTokenId: z.string().nullable().describe('deprecated extension, the same as actor.tokenId'),
  action: z.string(),
  target: z.string(),
  team: z.string().optional().describe('the team of the target (absent for global targets, seen by tokens of every team only)'),
  reason: z.string().optional(),
  before: z.unknown().optional(),
  after: z.unknown().optional(),
});

/** `teams` of a token: team names, or `["*"]` for every team. */
const tokenTeamsSchema = z
  .array(z.string().refine((t) => t === '*' || TEAM_NAME_PATTERN.test(t), { message: 'must be "*" or a team name (^[a-z][a-z0-9_-]{0,63}$)' }))
  .min(1, 'must name at least one team, or "*"')
  .max(100)
  .transform((teams) => [...new Set(teams)])
  .refine((teams) => !teams.includes('*') || teams.length === 1, { message: '"*" stands alone: it covers every team' });

/** Names compared as the database compares `api_token.name` (case-, accent- and width-blind). */
const nameCollator = new Intl.Collator('und', { sensitivity: 'base' });

/**
 * Whether `name` is the bootstrap token's: the `AX_ADMIN_TOKEN` rotation at every start revokes
 * every other live token of that name, so a token created under it would not outlive a restart.
 */
function isReservedTokenName(name: string): boolean {
  return nameCollator.compare(name, BOOTSTRAP_TOKEN_NAME) === 0;
}

const tokenSchema = z.object({ id: z.string(), name: z.string(), role: z.enum(ROLES), teams: z.array(z.string()), createdAt: z.string(), revokedAt: z.string().nullable(), lastUsedAt: z.string().nullable() });

/** Whether the caller covers every team of `token` (a `*` token: only a `*` caller). */
function coversToken(principal: Principal | null, token: Pick<ApiTokenRecord, 'teams'>): boolean {
  if (coversAllTeams(principal)) return true;
  return token.teams.length > 0 && token.teams.every((t) => t !== '*' && coversTeam(principal, t));
}

/** The one team of a token's audit entries, or null (a token of several teams, or of all, is global). */
function tokenAuditTeam(teams: readonly string[]): string | null {
  return teams.length === 1 && teams[0] !== '*' ? (teams[0] ?? null) : null;
}

function beforeIdOf(cursor: string | undefined): string | undefined {
  const before = decodeCursor(cursor);
  if (before === null || (before !== undefined && !/^\d{1,20}$/.test(before))) {
    throw validationFailed([{ path: 'cursor', message: 'cursor: not a cursor this API returned' }]);
  }
  return before;
}

export const adminRoutes: RouteSpec[] = [
  defineRoute<unknown, { actor?: string; from?: string; to?: string; limit: number; cursor?: string }>({
    method: 'get',
    path: '/api/v1/audit',
    access: 'admin',
    tag: 'admin',
    summary: "Audit entries, newest first (of the token's teams; global entries for tokens of every team only)",
    query: z.object({
      actor: z.string().max(128).optional(),
      from: instantSchema.optional().describe('at or after'),
      to: instantSchema.optional().describe('before'),
      ...pageQueryShape,
    }),
    responses: { 200: { description: 'a page of audit entries', schema: listOf(auditEntrySchema) } },
    handler: async ({ query, deps, principal }) => {
      const before = beforeIdOf(query.cursor);
      const rows = await listAuditEntries(deps.pool, {
        teams: visibleTeams(principal),
        ...(query.actor === undefined ? {} : { actor: query.actor }),
        ...(query.from === undefined ? {} : { from: new Date(query.from) }),
        ...(query.to === undefined ? {} : { to: new Date(query.to) }),
        ...(before === undefined ? {} : { beforeId: before }),
        limit: query.limit + 1,
      });
      return {
        status: 200,
        body: pageOf(rows, query.limit, (r) => r.id, (r) => ({
          id: r.id,
          at: r.at.toISOString(),
          actor: { tokenId: r.actorTokenId, name: r.actor },
          actorTokenId: r.actorTokenId,
          action: r.action,
          target: r.target,
          ...(r.team === null ? {} : { team: r.team }),
          ...(r.reason === null ? {} : { reason: r.reason }),
          ...(r.before === null ? {} : { before: r.before }),
          ...(r.after === null ? {} : { after: r.after }),
        })),
      };
    },
  }),
  defineRoute<unknown, unknown, { name: string; role: (typeof ROLES)[number]; teams: string[] }>({
    method: 'post',
    path: '/api/v1/tokens',
    access: 'admin',
    tag: 'admin',
    summary: 'Create an API token (the plaintext is shown once); names are unique among live tokens',
    description: 'A token acts for `teams` (default `["*"]`, every team). An admin of some teams may create tokens only for those teams.',
    body: {
      schema: z.strictObject({
        name: z
          .string()
          .trim()
          .min(1, 'must not be empty')
          .max(128)
          .refine((name) => !isReservedTokenName(name), { message: `"${BOOTSTRAP_TOKEN_NAME}" is reserved for the AX_ADMIN_TOKEN token` }),
        role: z.enum(ROLES, { error: 'must be viewer, operator or admin' }),
        teams: tokenTeamsSchema.default(['*']).describe('team names, or ["*"] for every team (default)'),
      }),
    },
    responses: {
      201: { description: 'the token', schema: z.object({ id: z.string(), name: z.string(), role: z.enum(ROLES), teams: z.array(z.string()), token: z.string() }) },
      400: { description: `\`VALIDATION_FAILED\`; also for the reserved name "${BOOTSTRAP_TOKEN_NAME}" (the AX_ADMIN_TOKEN token)` },
      403: { description: '`FORBIDDEN`: the role is too low, or `teams` names a team (or "*") the caller does not cover' },
      404: { description: 'a team of `teams` does not exist' },
      409: { description: '`ALREADY_EXISTS`: a live token has that name' },
    },
    handler: async ({ body, deps, principal }) => {
      if (!coversToken(principal, body)) {
        throw new ApiError(403, 'FORBIDDEN', 'this token may create tokens only for its own teams', { teams: principal?.teams === '*' ? ['*'] : [...(principal?.teams ?? [])] });
      }
      const token = generateToken();
      const id = await writeTransaction(deps.pool, async (tx) => {
        const named = body.teams.filter((t) => t !== '*');
        const found = await existingTeams(tx, named, { lock: true }); // a concurrent team delete waits: it then takes the team off this token (#44)
        const missing = named.find((t) => !found.has(t));
        if (missing !== undefined) throw notFound(`team ${JSON.stringify(missing)}`);
        const newId = await insertApiToken(tx, { name: body.name, role: body.role, teams: body.teams, tokenHash: hashToken(token) });
        await audit(tx, principal, {
          action: 'token.create',
          target: `token:${newId}`,
          team: tokenAuditTeam(body.teams),
          after: { id: newId, name: body.name, role: body.role, teams: body.teams },
        });
        return newId;
      });
      return { status: 201, body: { id, name: body.name, role: body.role, teams: body.teams, token } };
    },
  }),
  defineRoute<unknown, { limit: number; cursor?: string }>({
    method: 'get',
    path: '/api/v1/tokens',
    access: 'admin',
    tag: 'admin',
    extension: true,
    summary: "List API tokens without their secrets (extension): the tokens within the caller's teams",
    query: z.object({ ...pageQueryShape }),
    responses: { 200: { description: 'a page of tokens', schema: listOf(tokenSchema) } },
    handler: async ({ query, deps, principal }) => {
      const before = beforeIdOf(query.cursor);
      const rows = await listApiTokens(deps.pool, {
        ...(before === undefined ? {} : { beforeId: before }),
        withinTeams: visibleTeams(principal),
        limit: query.limit + 1,
      });
      return {
        status: 200,
        body: pageOf(rows, query.limit, (r) => r.id, (r) => ({
          id: r.id,
          name: r.name,
          role: r.role,
          teams: r.teams,
          createdAt: r.createdAt.toISOString(),
          revokedAt: r.revokedAt?.toISOString() ?? null,
          lastUsedAt: r.lastUsedAt?.toISOString() ?? null,
        })),
      };
    },
  }),
  defineRoute<{ id: string }>({
    method: 'delete',
    path: '/api/v1/tokens/{id}',
    access: 'admin',
    tag: 'admin',
    summary: 'Revoke an API token',
    params: idParams,
    description: "Its open log streams end (`event: closed`, reason `TOKEN_REVOKED`): at once in this process, within 5 s in others.",
    responses: { 204: { description: 'revoked' }, 404: { description: "no such live token within the caller's teams" } },
    handler: async ({ params, deps, principal }) => {
      if (!/^\d{1,20}$/.test(params.id)) throw notFound(`token ${JSON.stringify(params.id)}`);
      const revokedId = await writeTransaction(deps.pool, async (tx) => {
        const before = await getApiToken(tx, params.id);
        if (before === null || !coversToken(principal, before) || !(await revokeApiToken(tx, params.id))) throw notFound(`token ${JSON.stringify(params.id)}`);
        await audit(tx, principal, {
          action: 'token.revoke',
          target: `token:${params.id}`,
          team: tokenAuditTeam(before.teams),
          before: { id: before.id, name: before.name, role: before.role, teams: before.teams },
        });
        return before.id;
      });
      // Its log streams in this process end now; those of other processes at their next token check.
      deps.logStreams.endToken(revokedId, 'TOKEN_REVOKED');
      return { status: 204 };
    },
  }),
];

/**
 * Teams (ADMIN-API.md "Teams"): every token lists the teams it covers; creating, changing and
 * deleting a team needs an admin of every team (`*`). A team that owns tasks cannot be deleted
 * (the foreign key of `task.team` refuses it), nor can `default`.
 *
 * Executor keys: an admin of a team reads its current key (to configure the team's HTTP
 * service) and rotates it; the previous version verifies for `AX_EXECUTOR_KEY_GRACE_S` more.
 * Keys are derived from AX_EXECUTOR_SECRET (core's executor-key.ts), never stored. Reading a key
 * is audited like a rotation: it is the credential of that team's service.
 *
 * Alert routes (`alertRoutes`): webhooks the team's alerts go to besides the platform's; set by
 * an admin of every team like the other settings (the broker POSTs to them, so they are the
 * platform's decision). A webhook URL often holds its token in the path: only an admin reads it
 * whole; others, and the audit trail, see `scheme://host/***`.
 *
 * #44: a team deleted and created again is a new team: its key versions continue above the
 * deleted one's (store `team_key_floor`), so no key, signature or worker keyring entry of the
 * old team is valid for it, and the delete takes the team off every token naming it (a token
 * left with no team is revoked), so no old token acts for the new one, and off every worker
 * enrollment naming it, so no old enrollment's workers serve the new one or get its keys. `httpAllow` narrows
 * `AX_HTTP_EXECUTOR_ALLOW` for the team's `http` tasks (http-allow.ts).
 */
import { z } from 'zod';
import { DEFAULT_TEAM, acceptedKeyVersions, alertRouteTarget, alertRoutesSchema, deriveExecutorKey, teamNameSchema, ALERT_ROUTE_FORMATS, type AlertRoute } from '@ax/core';
import { deleteTeam, dropTeamFromEnrollments, dropTeamFromTokens, getTeam, getTeamsAlertRoutes, insertTeam, listTeams, rotateTeamKey, setTeamAlertRoutes, updateTeam, type Queryable, type TeamRecord } from '@ax/store';
import { httpAllowSchema } from '../http-allow.js';
import { audit } from '../audit.js';
import type { AppDeps } from '../deps.js';
import { ApiError, invalidState, notFound, validationFailed } from '../errors.js';
import { notifyTaskChanged } from '../notify.js';
import { decodeCursor, pageOf, pageQueryShape } from '../pagination.js';
import { defineRoute, type RouteSpec } from '../route.js';
import { listOf, nameParams } from '../schemas.js';
import { assertAllTeams, coversTeam, visibleTeams } from '../team-scope.js';
import type { Principal } from '../auth.js';
import { writeTransaction } from '../write-transaction.js';

const maxRunningSchema = z.int().min(1).max(1_000_000).nullable().describe('most DISPATCHED or RUNNING instances of the team at once; null = no limit');

const shownAlertRouteSchema = z.object({
  url: z.string().describe('the whole URL for an admin; scheme://host/*** for anyone else'),
  format: z.enum(ALERT_ROUTE_FORMATS),
  kinds: z.array(z.string()).optional(),
});
const weightSchema = z
  .int()
  .min(1)
  .max(1_000)
  .describe("the team's share of contended slots (DESIGN R23): slots go to teams with startable work in proportion to their weights; default 1");

const teamSchema = z.object({
  name: z.string(),
  description: z.string(),
  maxRunning: z.int().nullable(),
  httpAllow: z.array(z.string()).nullable().describe('hosts the team\'s `http` tasks may call, within the global AX_HTTP_EXECUTOR_ALLOW; null = the global list'),
  alertRoutes: z.array(shownAlertRouteSchema).describe("extension: where the team's alerts go besides AX_ALERT_WEBHOOK_URL"),
  weight: z.int().describe('share of contended slots (R23)'),
  keyVersion: z.int().describe('the current executor key version'),
  createdAt: z.string(),
  updatedAt: z.string(),
});

/** How a route is shown: whole to an admin, `scheme://host/***` otherwise (and in the audit trail). */
function shownRoute(route: AlertRoute, reveal: boolean): z.infer<typeof shownAlertRouteSchema> {
  return { url: reveal ? route.url : `${alertRouteTarget(route.url)}/***`, format: route.format, ...(route.kinds === undefined ? {} : { kinds: [...route.kinds] }) };
}

function teamResource(t: TeamRecord, routes: readonly AlertRoute[] = [], reveal = false): z.infer<typeof teamSchema> {
  return {
    name: t.name,
    description: t.description,
    maxRunning: t.maxRunning,
    httpAllow: t.httpAllow === null ? null : [...t.httpAllow],
    alertRoutes: routes.map((r) => shownRoute(r, reveal)),
    weight: t.weight,
    keyVersion: t.keyVersion,
    createdAt: t.createdAt.toISOString(),
    updatedAt: t.updatedAt.toISOString(),
  };
}

const executorKeySchema = z.object({
  team: z.string(),
  keyVersion: z.int(),
  key: z.string().describe('lowercase hex; the HMAC key of signature v2 for this team and version'),
  previousValidUntil: z.string().optional().describe('until when version keyVersion − 1 still verifies (during a rotation)'),
});

function keyResource(secret: string, t: TeamRecord, nowMs: number): z.infer<typeof executorKeySchema> {
  const grace = t.previousKeyValidUntil;
  return {
    team: t.name,
    keyVersion: t.keyVersion,
    key: deriveExecutorKey(secret, t.name, t.keyVersion),
    ...(grace !== null && acceptedKeyVersions(t, nowMs).length > 1 ? { previousValidUntil: grace.toISOString() } : {}),
  };
}

function masterSecret(deps: AppDeps): string {
  if (deps.executorSecret === undefined) throw new ApiError(503, 'UNAVAILABLE', 'AX_EXECUTOR_SECRET is not configured: there are no executor keys');
  return deps.executorSecret;
}

/** Only an admin reads a webhook URL whole. */
function revealsRoutes(principal: Principal | null): boolean {
  return principal === null || principal.role === 'admin';
}

async function routesOf(db: Queryable, team: string): Promise<AlertRoute[]> {
  return (await getTeamsAlertRoutes(db, [team])).get(team) ?? [];
}

const alertRoutesBodySchema = alertRoutesSchema.describe(
  'extension: webhooks [{url, format: generic|slack|dingtalk|wecom, kinds?}] the team\'s alerts go to besides AX_ALERT_WEBHOOK_URL (at most 10; [] removes them)',
);

/** Outside the token's teams a team does not exist (404), like everything else. */
function assertTeamCovered(principal: Principal | null, name: string): void {
  if (!coversTeam(principal, name)) throw notFound(`team ${JSON.stringify(name)}`);
}

export const teamRoutes: RouteSpec[] = [
  defineRoute<unknown, { limit: number; cursor?: string }>({
    method: 'get',
    path: '/api/v1/teams',
    access: 'viewer',
    tag: 'teams',
    summary: 'The teams the token covers, by name',
    query: z.object({ ...pageQueryShape }),
    responses: { 200: { description: 'a page of teams', schema: listOf(teamSchema) } },
    handler: async ({ query, deps, principal }) => {
      const after = decodeCursor(query.cursor);
      if (after === null) throw validationFailed([{ path: 'cursor', message: 'cursor: not a cursor this API returned' }]);
      const rows = await listTeams(deps.pool, { names: visibleTeams(principal), ...(after === undefined ? {} : { afterName: after }), limit: query.limit + 1 });
      const routes = await getTeamsAlertRoutes(deps.pool, rows.map((t) => t.name));
      const reveal = revealsRoutes(principal);
      return { status: 200, body: pageOf(rows, query.limit, (t) => t.name, (t) => teamResource(t, routes.get(t.name), reveal)) };
    },
  }),
  defineRoute<unknown, unknown, { name: string; description: string; maxRunning: number | null; weight: number; httpAllow: string[] | null; alertRoutes: AlertRoute[] }>({
    method: 'post',
    path: '/api/v1/teams',
    access: 'admin',
    tag: 'teams',
    summary: 'Create a team (key version 1, or above the last of a deleted team of that name); needs an admin of every team ("*")',
    body: {
      schema: z.strictObject({
        name: teamNameSchema,
        description: z.string().max(2048).default(''),
        maxRunning: maxRunningSchema.default(null),
        weight: weightSchema.default(1),
        httpAllow: httpAllowSchema.default(null),
        alertRoutes: alertRoutesBodySchema.default([]),
      }),
    },
    responses: {
      201: { description: 'the team', schema: teamSchema },
      403: { description: '`FORBIDDEN`: the role is too low, or the token does not cover every team' },
      409: { description: '`ALREADY_EXISTS`: a team of that name exists' },
    },
    handler: async ({ body, deps, principal }) => {
      assertAllTeams(principal, 'creating a team');
      const team = await writeTransaction(deps.pool, async (tx) => {
        const created = await insertTeam(tx, body);
        if (body.alertRoutes.length > 0) await setTeamAlertRoutes(tx, created.name, body.alertRoutes);
        await audit(tx, principal, { action: 'team.create', target: `team:${created.name}`, team: created.name, after: teamResource(created, body.alertRoutes) });
        return created;
      });
      // brokers load the new team (its httpAllow and key version) at once
      await notifyTaskChanged(deps, [`team:${team.name}`]);
      return { status: 201, body: teamResource(team, body.alertRoutes, revealsRoutes(principal)) };
    },
  }),
  defineRoute<{ name: string }, unknown, { description?: string; maxRunning?: number | null; weight?: number; httpAllow?: string[] | null; alertRoutes?: AlertRoute[] }>({
    method: 'patch',
    path: '/api/v1/teams/{name}',
    access: 'admin',
    tag: 'teams',
    summary: 'Change the description, maxRunning, weight, httpAllow or alertRoutes of a team; needs an admin of every team ("*")',
    params: nameParams,
    body: {
      schema: z.strictObject({
        description: z.string().max(2048).optional(),
        maxRunning: maxRunningSchema.optional(),
        weight: weightSchema.optional(),
        httpAllow: httpAllowSchema.optional(),
        alertRoutes: alertRoutesBodySchema.optional(),
      }),
    },
    responses: {
      200: { description: 'the team', schema: teamSchema },
      403: { description: '`FORBIDDEN`: the role is too low, or the token does not cover every team' },
      404: { description: 'no such team' },
    },
    handler: async ({ params, body, deps, principal }) => {
      assertAllTeams(principal, 'changing a team');
      const { team, routes } = await writeTransaction(deps.pool, async (tx) => {
        const before = await getTeam(tx, params.name, { forUpdate: true });
        if (before === null) throw notFound(`team ${JSON.stringify(params.name)}`);
        const routesBefore = await routesOf(tx, params.name);
        const after = await updateTeam(tx, params.name, body);
        if (after === null) throw notFound(`team ${JSON.stringify(params.name)}`);
        if (body.alertRoutes !== undefined) await setTeamAlertRoutes(tx, params.name, body.alertRoutes);
        const routesAfter = body.alertRoutes ?? routesBefore;
        await audit(tx, principal, {
          action: 'team.update',
          target: `team:${params.name}`,
          team: params.name,
          before: teamResource(before, routesBefore),
          after: teamResource(after, routesAfter),
        });
        return { team: after, routes: routesAfter };
      });
      // brokers reload their team directory on it: a changed maxRunning, weight or httpAllow applies at once
      await notifyTaskChanged(deps, [`team:${team.name}`]);
      return { status: 200, body: teamResource(team, routes, revealsRoutes(principal)) };
    },
  }),
  defineRoute<{ name: string }>({
    method: 'delete',
    path: '/api/v1/teams/{name}',
    access: 'admin',
    tag: 'teams',
    summary: 'Delete a team that owns no task; needs an admin of every team ("*")',
    description:
      'The team is taken off every token that names it; a token left with no team is revoked. It is taken off every worker enrollment that names it too (one left with no team serves nothing until revoked). A team created again under the name starts at the key version after the deleted one\'s: it is a new team, and nothing of the old one (tokens, keys, enrollments) acts for it.',
    params: nameParams,
    responses: {
      204: { description: 'deleted' },
      403: { description: '`FORBIDDEN`: the role is too low, or the token does not cover every team' },
      404: { description: 'no such team' },
      409: { description: '`INVALID_STATE`: the team owns tasks, or it is `default`' },
    },
    handler: async ({ params, deps, principal }) => {
      assertAllTeams(principal, 'deleting a team');
      if (params.name === DEFAULT_TEAM) throw invalidState('team "default" always exists; it cannot be deleted', { team: DEFAULT_TEAM });
      await writeTransaction(deps.pool, async (tx) => {
        const before = await getTeam(tx, params.name, { forUpdate: true });
        const routes = before === null ? [] : await routesOf(tx, params.name); // read before the row goes
        if (before === null || !(await deleteTeam(tx, params.name))) throw notFound(`team ${JSON.stringify(params.name)}`);
        const tokens = await dropTeamFromTokens(tx, params.name);
        const enrollments = await dropTeamFromEnrollments(tx, params.name);
        await audit(tx, principal, {
          action: 'team.delete',
          target: `team:${params.name}`,
          team: params.name,
          before: teamResource(before, routes),
          after: { tokensNarrowed: tokens.narrowed, tokensRevoked: tokens.revoked, enrollmentsNarrowed: enrollments },
        });
      });
      return { status: 204 };
    },
  }),
  defineRoute<{ name: string }>({
    method: 'get',
    path: '/api/v1/teams/{name}/executor-key',
    access: 'admin',
    tag: 'teams',
    summary: "The team's current executor key (for its HTTP service); needs an admin of that team",
    params: nameParams,
    responses: {
      200: { description: 'the current key', schema: executorKeySchema },
      404: { description: 'no such team (or not one of the token\'s teams)' },
      503: { description: 'AX_EXECUTOR_SECRET is not configured' },
    },
    handler: async ({ params, deps, principal }) => {
      assertTeamCovered(principal, params.name);
      const secret = masterSecret(deps);
      const body = await writeTransaction(deps.pool, async (tx) => {
        const team = await getTeam(tx, params.name);
        if (team === null) throw notFound(`team ${JSON.stringify(params.name)}`);
        await audit(tx, principal, { action: 'team.executor-key.read', target: `team:${team.name}`, team: team.name, after: { keyVersion: team.keyVersion } });
        return keyResource(secret, team, deps.now());
      });
      return { status: 200, body };
    },
  }),
  defineRoute<{ name: string }>({
    method: 'post',
    path: '/api/v1/teams/{name}/executor-keys',
    access: 'admin',
    tag: 'teams',
    summary: 'Rotate the team\'s executor key to the next version; the previous one stays valid for AX_EXECUTOR_KEY_GRACE_S',
    description:
      'Workers sign with the new version at once and, during the grace, add `X-Ax-Previous-Signature` made with the previous one, so the service keeps verifying until it has loaded the new key. Reports and claims signed with either version are accepted during the grace. A second rotation within the grace ends the oldest version at once.',
    params: nameParams,
    responses: {
      201: { description: 'the new key', schema: executorKeySchema },
      404: { description: 'no such team (or not one of the token\'s teams)' },
      503: { description: 'AX_EXECUTOR_SECRET is not configured' },
    },
    handler: async ({ params, deps, principal }) => {
      assertTeamCovered(principal, params.name);
      const secret = masterSecret(deps);
      const graceSeconds = deps.executorKeyGraceSeconds ?? 86_400;
      const team = await writeTransaction(deps.pool, async (tx) => {
        const before = await getTeam(tx, params.name, { forUpdate: true });
        if (before === null) throw notFound(`team ${JSON.stringify(params.name)}`);
        const after = await rotateTeamKey(tx, params.name, graceSeconds);
        if (after === null) throw notFound(`team ${JSON.stringify(params.name)}`);
        await audit(tx, principal, {
          action: 'team.executor-key.rotate',
          target: `team:${after.name}`,
          team: after.name,
          before: { keyVersion: before.keyVersion },
          after: { keyVersion: after.keyVersion, previousValidUntil: after.previousKeyValidUntil?.toISOString() ?? null },
        });
        return after;
      });
      // brokers refresh their team directory on it: dispatches carry the new version at once
      await notifyTaskChanged(deps, [`team:${team.name}`]);
      return { status: 201, body: keyResource(secret, team, deps.now()) };
    },
  }),
];

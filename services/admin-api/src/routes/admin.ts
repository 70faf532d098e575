/** Admin endpoints: audit log and API tokens. */
import { z } from 'zod';
import { getApiToken, insertApiToken, listApiTokens, listAuditEntries, revokeApiToken, withTransaction } from '@ax/store';
import { audit } from '../audit.js';
import { ROLES, generateToken, hashToken } from '../auth.js';
import { notFound, validationFailed } from '../errors.js';
import { decodeCursor, pageOf, pageQueryShape } from '../pagination.js';
import { defineRoute, type RouteSpec } from '../route.js';
import { idParams, instantSchema, listOf } from '../schemas.js';

const auditEntrySchema = z.object({
  id: z.string(),
  at: z.string(),
  actor: z.string(),
  action: z.string(),
  target: z.string(),
  reason: z.string().optional(),
  before: z.unknown().optional(),
  after: z.unknown().optional(),
});

const tokenSchema = z.object({ id: z.string(), name: z.string(), role: z.enum(ROLES), createdAt: z.string(), revokedAt: z.string().nullable(), lastUsedAt: z.string().nullable() });

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
    summary: 'Audit entries, newest first',
    query: z.object({
      actor: z.string().max(128).optional(),
      from: instantSchema.optional().describe('at or after'),
      to: instantSchema.optional().describe('before'),
      ...pageQueryShape,
    }),
    responses: { 200: { description: 'a page of audit entries', schema: listOf(auditEntrySchema) } },
    handler: async ({ query, deps }) => {
      const before = beforeIdOf(query.cursor);
      const rows = await listAuditEntries(deps.pool, {
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
          actor: r.actor,
          action: r.action,
          target: r.target,
          ...(r.reason === null ? {} : { reason: r.reason }),
          ...(r.before === null ? {} : { before: r.before }),
          ...(r.after === null ? {} : { after: r.after }),
        })),
      };
    },
  }),
  defineRoute<unknown, unknown, { name: string; role: (typeof ROLES)[number] }>({
    method: 'post',
    path: '/api/v1/tokens',
    access: 'admin',
    tag: 'admin',
    summary: 'Create an API token (the plaintext is shown once)',
    body: {
      schema: z.strictObject({
        name: z.string().trim().min(1, 'must not be empty').max(128),
        role: z.enum(ROLES, { error: 'must be viewer, operator or admin' }),
      }),
    },
    responses: { 201: { description: 'the token', schema: z.object({ id: z.string(), name: z.string(), role: z.enum(ROLES), token: z.string() }) } },
    handler: async ({ body, deps, principal }) => {
      const token = generateToken();
      const id = await withTransaction(deps.pool, async (tx) => {
        const newId = await insertApiToken(tx, { name: body.name, role: body.role, tokenHash: hashToken(token) });
        await audit(tx, principal, { action: 'token.create', target: `token:${newId}`, after: { id: newId, name: body.name, role: body.role } });
        return newId;
      });
      return { status: 201, body: { id, name: body.name, role: body.role, token } };
    },
  }),
  defineRoute<unknown, { limit: number; cursor?: string }>({
    method: 'get',
    path: '/api/v1/tokens',
    access: 'admin',
    tag: 'admin',
    extension: true,
    summary: 'List API tokens without their secrets (extension)',
    query: z.object({ ...pageQueryShape }),
    responses: { 200: { description: 'a page of tokens', schema: listOf(tokenSchema) } },
    handler: async ({ query, deps }) => {
      const before = beforeIdOf(query.cursor);
      const rows = await listApiTokens(deps.pool, { ...(before === undefined ? {} : { beforeId: before }), limit: query.limit + 1 });
      return {
        status: 200,
        body: pageOf(rows, query.limit, (r) => r.id, (r) => ({
          id: r.id,
          name: r.name,
          role: r.role,
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
    responses: { 204: { description: 'revoked' }, 404: { description: 'no such live token' } },
    handler: async ({ params, deps, principal }) => {
      if (!/^\d{1,20}$/.test(params.id)) throw notFound(`token ${JSON.stringify(params.id)}`);
      await withTransaction(deps.pool, async (tx) => {
        const before = await getApiToken(tx, params.id);
        if (before === null || !(await revokeApiToken(tx, params.id))) throw notFound(`token ${JSON.stringify(params.id)}`);
        await audit(tx, principal, { action: 'token.revoke', target: `token:${params.id}`, before: { id: before.id, name: before.name, role: before.role } });
      });
      return { status: 204 };
    },
  }),
];

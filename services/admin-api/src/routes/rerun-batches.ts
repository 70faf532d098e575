/**
 * Rerun and backfill batches (ADMIN-API.md "Endpoints": `GET /api/v1/reruns`,
 * `GET /api/v1/reruns/{batchId}`, `POST /api/v1/reruns/{batchId}/cancel`): what `POST
 * /api/v1/reruns` started, its instances counted by state, and a cancel that stops what has not
 * started. A batch is of the teams of its instances: outside them it answers 404 and is not
 * listed (the store's visibility condition). Extension: `GET /api/v1/reruns/{batchId}/instances`
 * lists the instances the counts are of, oldest first.
 */
import { z } from 'zod';
import { FINAL_STATES, INSTANCE_STATES, type InstanceState } from '@ax/core';
import {
  RERUN_CANCEL_ACTION,
  cancelInstance,
  currentRunTimes,
  getRerunBatch,
  instancesOfRerunBatch,
  listRerunBatches,
  rerunBatchCancels,
  rerunBatchCounts,
  rerunBatchesAwaitingDownstream,
  rerunBatchTarget,
  rerunBatchTeams,
  waitingOfInstances,
  type Queryable,
  type RerunBatchRecord,
} from '@ax/store';
import { audit } from '../audit.js';
import { invalidState, notFound, validationFailed } from '../errors.js';
import { decodeCursor, pageOf, pageQueryShape } from '../pagination.js';
import { instanceResource } from '../resources.js';
import { defineRoute, type RouteSpec } from '../route.js';
import { instanceSchema, listOf, reasonSchema } from '../schemas.js';

/** `{batchId}` path parameter. */
const batchParams = z.object({ batchId: z.string().max(64).describe('the batchId of POST /api/v1/reruns') });
import { visibleTeams } from '../team-scope.js';
import { writeTransaction } from '../write-transaction.js';

/** States of a batch's instances that have not started: a cancel cancels them. */
const NOT_STARTED: readonly InstanceState[] = ['WAITING', 'PENDING'];

const countsSchema = z.object(Object.fromEntries(INSTANCE_STATES.map((s) => [s, z.int()])) as Record<InstanceState, z.ZodInt>);

export const rerunBatchSchema = z.object({
  id: z.string(),
  mode: z.enum(['instance', 'dag', 'failed', 'backfill']),
  state: z.enum(['running', 'done', 'canceled']).describe('canceled once canceled (its running instances may still finish); else running while an instance is not final or a dependency-only child of a finished run is still to be created; else done'),
  reason: z.string(),
  actor: z.string().describe('name of the token that started it'),
  createdAt: z.string(),
  total: z.int().describe('instances of the batch (an instance re-run by a later batch counts in that one)'),
  counts: countsSchema.describe('instances of the batch by state; they add up to total'),
  finished: z.int().describe('extension: instances in a final state (SUCCESS, FAILED, CANCELED)'),
  progress: z.number().describe('extension: finished / total, 0 to 1 (1 for a batch without instances)'),
  concurrency: z.int().nullable().describe('extension: backfill: most instances running at once; null = no limit'),
  forceDownstream: z.boolean().describe('extension'),
  request: z.record(z.string(), z.unknown()).describe('extension: the request body as accepted'),
  canceledAt: z.string().nullable().describe('extension: when it was canceled, or null'),
  canceledBy: z.string().nullable().describe('extension: the token name that canceled it, or null'),
});

/** The batch resources of these rows, counted and with their cancels. */
async function batchResources(db: Queryable, batches: readonly RerunBatchRecord[]): Promise<Array<Record<string, unknown>>> {
  const ids = batches.map((b) => b.id);
  const [counts, cancels, awaiting] = await Promise.all([rerunBatchCounts(db, ids), rerunBatchCancels(db, batches), rerunBatchesAwaitingDownstream(db, ids)]);
  return batches.map((b) => {
    const byState = counts.get(b.id);
    const out = Object.fromEntries(INSTANCE_STATES.map((s) => [s, byState?.get(s) ?? 0])) as Record<InstanceState, number>;
    const total = INSTANCE_STATES.reduce((sum, s) => sum + out[s], 0);
    const finished = FINAL_STATES.reduce((sum, s) => sum + out[s], 0);
    const cancel = cancels.get(b.id);
    // A run whose dependency-only child is about to be created keeps its batch running (#47).
    const state = cancel !== undefined ? 'canceled' : finished < total || awaiting.has(b.id) ? 'running' : 'done';
    return {
      id: b.id,
      mode: b.mode,
      state,
      reason: b.reason,
      actor: b.actor,
      createdAt: b.createdAt.toISOString(),
      total,
      counts: out,
      finished,
      progress: total === 0 ? 1 : finished / total,
      concurrency: b.concurrency,
      forceDownstream: b.forceDownstream,
      request: b.request ?? {},
      canceledAt: cancel === undefined ? null : cancel.at.toISOString(),
      canceledBy: cancel === undefined ? null : cancel.actor,
    };
  });
}

/** A batch id of the path, or 404 (an id no batch can have is simply not found). */
function batchId(raw: string): string {
  if (!/^\d{1,20}$/.test(raw)) throw notFound(`rerun batch ${JSON.stringify(raw)}`);
  return raw;
}

export const rerunBatchRoutes: RouteSpec[] = [
  defineRoute<unknown, { mode?: string; limit: number; cursor?: string }>({
    method: 'get',
    path: '/api/v1/reruns',
    access: 'viewer',
    tag: 'instances',
    summary: "Rerun and backfill batches of the token's teams, newest first",
    query: z.object({
      mode: z.enum(['instance', 'dag', 'failed', 'backfill']).optional().describe('extension: only batches of this mode'),
      ...pageQueryShape,
    }),
    responses: { 200: { description: 'a page of batches', schema: listOf(rerunBatchSchema) } },
    handler: async ({ query, deps, principal }) => {
      const before = decodeCursor(query.cursor);
      if (before === null || (before !== undefined && !/^\d{1,20}$/.test(before))) {
        throw validationFailed([{ path: 'cursor', message: 'cursor: not a cursor this API returned' }]);
      }
      const rows = await listRerunBatches(deps.pool, {
        teams: visibleTeams(principal),
        ...(before === undefined ? {} : { beforeId: before }),
        ...(query.mode === undefined ? {} : { mode: query.mode }),
        limit: query.limit + 1,
      });
      const page = rows.slice(0, query.limit);
      const resources = new Map((await batchResources(deps.pool, page)).map((r) => [r['id'] as string, r]));
      return { status: 200, body: pageOf(rows, query.limit, (b) => b.id, (b) => resources.get(b.id)) };
    },
  }),
  defineRoute<{ batchId: string }>({
    method: 'get',
    path: '/api/v1/reruns/{batchId}',
    access: 'viewer',
    tag: 'instances',
    summary: 'One rerun or backfill batch: its state and its instances counted by state',
    params: batchParams,
    responses: { 200: { description: 'the batch', schema: rerunBatchSchema }, 404: { description: "no such batch of the token's teams" } },
    handler: async ({ params, deps, principal }) => {
      const batch = await getRerunBatch(deps.pool, batchId(params.batchId), { teams: visibleTeams(principal) });
      if (batch === null) throw notFound(`rerun batch ${JSON.stringify(params.batchId)}`);
      const [resource] = await batchResources(deps.pool, [batch]);
      return { status: 200, body: resource };
    },
  }),
  defineRoute<{ batchId: string }, { limit: number; cursor?: string }>({
    method: 'get',
    path: '/api/v1/reruns/{batchId}/instances',
    access: 'viewer',
    tag: 'instances',
    extension: true,
    summary: 'The instances of a rerun or backfill batch, oldest first (extension)',
    description: 'The instances `counts` of `GET /api/v1/reruns/{batchId}` are of: those whose latest run was started by this batch (an instance re-run by a later batch moves to that one).',
    params: batchParams,
    query: z.object(pageQueryShape),
    responses: { 200: { description: 'a page of instances', schema: listOf(instanceSchema) }, 404: { description: "no such batch of the token's teams" } },
    handler: async ({ params, query, deps, principal }) => {
      const id = batchId(params.batchId);
      const after = decodeCursor(query.cursor);
      if (after === null || (after !== undefined && !/^\d{1,20}$/.test(after))) {
        throw validationFailed([{ path: 'cursor', message: 'cursor: not a cursor this API returned' }]);
      }
      const batch = await getRerunBatch(deps.pool, id, { teams: visibleTeams(principal) });
      if (batch === null) throw notFound(`rerun batch ${JSON.stringify(params.batchId)}`);
      // A batch is at most MAX_BACKFILL_SLOTS instances (idx_instance_rerun_batch): paged here.
      const all = await instancesOfRerunBatch(deps.pool, id, { states: INSTANCE_STATES });
      const rows = (after === undefined ? all : all.filter((i) => BigInt(i.id) > BigInt(after))).slice(0, query.limit + 1);
      const shown = rows.slice(0, query.limit).map((i) => i.id);
      const [runs, waits] = await Promise.all([currentRunTimes(deps.pool, shown), waitingOfInstances(deps.pool, shown)]);
      return { status: 200, body: pageOf(rows, query.limit, (i) => i.id, (i) => instanceResource(i, runs.get(i.id), waits.get(i.id))) };
    },
  }),
  defineRoute<{ batchId: string }, unknown, { reason?: string }>({
    method: 'post',
    path: '/api/v1/reruns/{batchId}/cancel',
    access: 'operator',
    tag: 'instances',
    summary: 'Stop a batch: its instances not yet started are canceled (CANCELED_BY_USER), running ones finish',
    description: 'WAITING and PENDING instances of the batch are canceled; DISPATCHED, RUNNING and RETRY_WAIT ones run to their end. Audited as `rerun.cancel`.',
    params: batchParams,
    body: { optional: true, schema: z.strictObject({ reason: reasonSchema.optional().describe('why (audited)') }) },
    responses: {
      200: {
        description: 'the batch, canceled',
        schema: rerunBatchSchema.extend({ canceled: z.array(z.string()).describe('extension: ids of the instances this cancel canceled, oldest first') }),
      },
      404: { description: "no such batch of the token's teams" },
      409: { description: '`INVALID_STATE`: the batch is done or canceled already' },
    },
    handler: async ({ params, body, deps, principal }) => {
      const id = batchId(params.batchId);
      const teams = visibleTeams(principal);
      const actor = principal?.name ?? 'unknown';
      const canceled: string[] = [];
      await writeTransaction(deps.pool, async (tx) => {
        canceled.length = 0; // a retried transaction starts over
        // The batch row locked: two cancels of one batch queue up and the second sees the first.
        const batch = await getRerunBatch(tx, id, { teams, forUpdate: true });
        if (batch === null) throw notFound(`rerun batch ${JSON.stringify(params.batchId)}`);
        const [before] = await batchResources(tx, [batch]);
        if (before?.['state'] !== 'running') throw invalidState(`rerun batch ${id} is ${String(before?.['state'])}`, { state: before?.['state'] });
        for (const inst of await instancesOfRerunBatch(tx, id, { states: NOT_STARTED, forUpdate: true })) {
          const outcome = await cancelInstance(tx, inst, actor);
          if (outcome.kind === 'canceled') canceled.push(inst.id);
        }
        const batchTeams = [...new Set((await rerunBatchTeams(tx, [id])).get(id) ?? [])];
        await audit(tx, principal, {
          action: RERUN_CANCEL_ACTION,
          target: rerunBatchTarget(id),
          reason: body.reason ?? null,
          team: batchTeams.length === 1 ? (batchTeams[0] ?? null) : null,
          before: { state: 'running', counts: before['counts'] },
          after: { state: 'canceled', canceled },
        });
      });
      const batch = await getRerunBatch(deps.pool, id, { teams });
      if (batch === null) throw notFound(`rerun batch ${JSON.stringify(params.batchId)}`);
      const [resource] = await batchResources(deps.pool, [batch]);
      return { status: 200, body: { ...resource, canceled } };
    },
  }),
];

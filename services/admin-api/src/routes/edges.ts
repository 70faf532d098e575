/** DAG edges: add (cycle-checked under the DAG lock, R19), remove, and the DAG view. */
import { z } from 'zod';
import { findCycle, planDependsOn, type DependencyEdge, type DependsOnEntry, type Issue } from '@ax/core';

const RULES = ['ALL_SUCCESS', 'ALL_DONE'] as const;
import { bumpDagVersion, deleteEdge, getTask, insertEdge, listEdges, listIncomingEdges, listTaskNames, lockDag, recordEdgeTeams, setEdgeRule, type Queryable } from '@ax/store';
import { cycleError } from '../cycle-scope.js';
import type { Principal } from '../auth.js';
import { coversTeam, mustSeeTask, mustSeeTaskName, visibleTeams } from '../team-scope.js';
import { visibleEdges, visibleReachableFrom } from '../dag-scope.js';
import { audit } from '../audit.js';
import { ApiError, notFound, validationFailed } from '../errors.js';
import { notifyTaskChanged } from '../notify.js';
import { defineRoute, type RouteSpec } from '../route.js';
import { taskNameSchema } from '../schemas.js';
import { writeTransaction } from '../write-transaction.js';

/**
 * An edge may join tasks of two teams (ADMIN-API.md "Teams"): writing it needs operator on the
 * child's team (the route's role, for a team the token covers) and sight of the parent; either
 * outside the token's teams answers 404 as if missing. Returns the child's team.
 */
async function assertEdgeWritable(tx: Queryable, principal: Principal | null, edge: { parent: string; child: string }): Promise<string> {
  await mustSeeTask(tx, principal, edge.parent);
  const child = await mustSeeTask(tx, principal, edge.child);
  return child.definition.team;
}

/** One task of a write that names its parents (`dependsOn`). */
export interface DependsOnWrite {
  readonly child: string;
  /** The child's team (of the write): the team of its edges' audit entries. */
  readonly team: string;
  readonly parents: readonly DependsOnEntry[];
  /** Put in front of each issue about it (`document 2: `); default none. */
  readonly where?: string;
}

/** What {@link writeDependsOn} changed: edges added, changed (new rule) and removed. */
export interface DependsOnOutcome {
  readonly added: DependencyEdge[];
  readonly changed: DependencyEdge[];
  readonly removed: DependencyEdge[];
}

/**
 * Makes the incoming edges of each task in `writes` what its `dependsOn` names (ADMIN-API.md
 * "Task definition"), inside the caller's transaction, which must hold the DAG lock
 * (`lockDag`) and have written the tasks already. A parent must exist and be visible to the
 * caller, or be one of `written` (created in the same write), and not be in `deleted`; a parent
 * the caller cannot see is reported exactly as a missing one (400, issue at
 * `dependsOn[i].task`). Edges from parents the caller cannot see are kept as they are. A
 * cycle is refused whole: 409 `CYCLE`, `details.cycle` the task names in order. Edges of the
 * `deleted` tasks are left to their delete (they go with the task).
 */
export async function writeDependsOn(
  tx: Queryable,
  principal: Principal | null,
  writes: readonly DependsOnWrite[],
  opts: { written?: ReadonlySet<string>; deleted?: ReadonlySet<string>; reason?: string; dryRun?: boolean } = {},
): Promise<DependsOnOutcome> {
  const written = opts.written ?? new Set(writes.map((w) => w.child));
  const deleted = opts.deleted ?? new Set<string>();
  const issues: Issue[] = [];
  const seen = new Map<string, boolean>();
  for (const w of writes) {
    for (const [index, parent] of w.parents.entries()) {
      let visible = seen.get(parent.task);
      if (visible === undefined) {
        const task = written.has(parent.task) ? null : await getTask(tx, parent.task);
        visible = written.has(parent.task) || (task !== null && coversTeam(principal, task.definition.team));
        seen.set(parent.task, visible);
      }
      if (!visible || deleted.has(parent.task)) {
        const path = `dependsOn[${index}].task`;
        issues.push({ path, message: `${w.where ?? ''}${path}: no task ${JSON.stringify(parent.task)} (task ${JSON.stringify(w.child)} depends on it; create it first or in the same import)` });
      }
    }
  }
  if (issues.length > 0) throw validationFailed(issues);
  if (writes.length === 0 && deleted.size === 0) return { added: [], changed: [], removed: [] };
  const hidden = new Set(
    (await listIncomingEdges(tx, writes.map((w) => w.child)))
      .filter((e) => !coversTeam(principal, e.parentTeam))
      .map((e) => `${e.parent}\n${e.child}`),
  );
  const plan = planDependsOn(await listEdges(tx), new Map(writes.map((w) => [w.child, w.parents])), {
    keep: (e) => hidden.has(`${e.parent}\n${e.child}`),
    deleted,
  });
  if (plan.cycle !== null) throw await cycleError(tx, principal, plan.cycle, { written, prefix: 'dependsOn: cycle ' });
  const removed = plan.remove.filter((e) => !deleted.has(e.parent) && !deleted.has(e.child));
  const outcome = { added: plan.add, changed: plan.change, removed };
  if (opts.dryRun === true) return outcome;
  // The kept edges named again are allowed again between their tasks' current teams (#44: a
  // task moved to another team needs its dependsOn written again by a token covering it).
  for (const w of writes) await recordEdgeTeams(tx, w.child, w.parents.map((p) => p.task));
  if (plan.add.length === 0 && plan.change.length === 0 && removed.length === 0) return outcome;
  const teamOf = new Map(writes.map((w) => [w.child, w.team]));
  const reason = opts.reason ?? 'dependsOn';
  for (const edge of removed) {
    await deleteEdge(tx, edge);
    await audit(tx, principal, { action: 'edge.delete', target: `edge:${edge.parent}->${edge.child}`, team: teamOf.get(edge.child) ?? null, reason, before: edge });
  }
  for (const edge of plan.change) {
    await setEdgeRule(tx, edge);
    await audit(tx, principal, { action: 'edge.update', target: `edge:${edge.parent}->${edge.child}`, team: teamOf.get(edge.child) ?? null, reason, after: edge });
  }
  for (const edge of plan.add) {
    await insertEdge(tx, edge);
    await audit(tx, principal, { action: 'edge.create', target: `edge:${edge.parent}->${edge.child}`, team: teamOf.get(edge.child) ?? null, reason, after: edge });
  }
  await bumpDagVersion(tx);
  return outcome;
}

const edgeSchema = z.object({ parent: z.string(), child: z.string(), rule: z.enum(RULES) });

export const edgeRoutes: RouteSpec[] = [
  defineRoute<unknown, unknown, { parent: string; child: string; rule: 'ALL_SUCCESS' | 'ALL_DONE' }>({
    method: 'post',
    path: '/api/v1/edges',
    access: 'operator',
    tag: 'dag',
    summary: 'Add a DAG edge (refused with the cycle named if it would close one)',
    body: {
      schema: z.strictObject({
        parent: taskNameSchema,
        child: taskNameSchema,
        rule: z.enum(RULES, { error: 'must be ALL_SUCCESS or ALL_DONE' }).default('ALL_SUCCESS'),
      }),
    },
    responses: {
      201: { description: 'the edge', schema: edgeSchema },
      404: { description: 'the parent or child task does not exist' },
      409: { description: '`CYCLE` with `details.cycle` = the task names in order (first = last), or `ALREADY_EXISTS`' },
    },
    handler: async ({ body, deps, principal }) => {
      await writeTransaction(deps.pool, async (tx) => {
        await lockDag(tx);
        const team = await assertEdgeWritable(tx, principal, body);
        const edges = await listEdges(tx);
        if (edges.some((e) => e.parent === body.parent && e.child === body.child)) {
          throw new ApiError(409, 'ALREADY_EXISTS', `the edge ${body.parent} → ${body.child} exists already`);
        }
        const cycle = findCycle(edges, { parent: body.parent, child: body.child });
        if (cycle !== null) throw await cycleError(tx, principal, cycle, { prefix: 'the edge would close a dependency cycle: ' });
        if (!(await insertEdge(tx, body))) throw new ApiError(409, 'ALREADY_EXISTS', `the edge ${body.parent} → ${body.child} exists already`);
        await bumpDagVersion(tx);
        await audit(tx, principal, { action: 'edge.create', target: `edge:${body.parent}->${body.child}`, team, after: body });
      });
      await notifyTaskChanged(deps, [body.child]);
      return { status: 201, body: { parent: body.parent, child: body.child, rule: body.rule } };
    },
  }),
  defineRoute<unknown, { parent: string; child: string }>({
    method: 'delete',
    path: '/api/v1/edges',
    access: 'operator',
    tag: 'dag',
    summary: 'Remove a DAG edge',
    query: z.object({ parent: z.string().min(1).max(128), child: z.string().min(1).max(128) }),
    responses: { 204: { description: 'removed' }, 404: { description: 'no such edge' } },
    handler: async ({ query, deps, principal }) => {
      await writeTransaction(deps.pool, async (tx) => {
        await lockDag(tx);
        const team = await assertEdgeWritable(tx, principal, query);
        const before = (await listEdges(tx)).find((e) => e.parent === query.parent && e.child === query.child);
        if (before === undefined || !(await deleteEdge(tx, query))) throw notFound(`edge ${query.parent} → ${query.child}`);
        await bumpDagVersion(tx);
        await audit(tx, principal, { action: 'edge.delete', target: `edge:${query.parent}->${query.child}`, team, before });
      });
      await notifyTaskChanged(deps, [query.child]);
      return { status: 204 };
    },
  }),
  defineRoute<unknown, { root?: string }>({
    method: 'get',
    path: '/api/v1/dag',
    access: 'viewer',
    tag: 'dag',
    summary: 'The DAG reachable from `root` (all of it without)',
    query: z.object({ root: z.string().min(1).max(128).optional() }),
    responses: {
      200: { description: 'nodes and edges', schema: z.object({ nodes: z.array(z.string()), edges: z.array(edgeSchema) }) },
      404: { description: 'no such root task' },
    },
    handler: async ({ query, deps, principal }) => {
      // Only the caller's teams' tasks, and the edges between them (dag-scope.ts).
      if (query.root === undefined) {
        const edges = await visibleEdges(deps.pool, principal);
        return { status: 200, body: { nodes: await listTaskNames(deps.pool, visibleTeams(principal)), edges } };
      }
      await mustSeeTaskName(deps.pool, principal, query.root); // its team only: the DAG shows no definition
      const reach = await visibleReachableFrom(deps.pool, principal, query.root);
      return { status: 200, body: { nodes: reach.nodes, edges: reach.edges } };
    },
  }),
];

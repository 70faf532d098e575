/**
 * The claim transaction of a dispatch (DESIGN §4): claim due PENDING instances (R23's fair
 * shares, fair-claim.ts), read what the plan needs under the locks (tasks, R4's active runs and
 * queue heads, R20's rerun batches, DESIGN §11's team rows), run the planner (claim-plan.ts)
 * answering its effects, reserve the plan's slots (R9, dispatch-slots.ts), and write it:
 * NO_WORKER, deferral and team-limit bookkeeping, executions, PENDING → DISPATCHED with a
 * generous ACK deadline, events, claim spans (#48). Publishing is the caller's, after the commit.
 */
import { TeamQuota, isQueueBlock, teamsAtLimit, type WorkerSnapshot } from '@ax/core';
import {
  activeRunsByTeam,
  activeRunsOfTasks,
  appendEvents,
  earliestWaitingSlots,
  insertExecutions,
  loadTasksById,
  lockTasksForBlockCheck,
  lockTeamLimits,
  nowPlusMs,
  WAIT_ENDED,
  raiseAlert,
  recordNoWorker,
  recordWaitingOnce,
  rerunBatchLoads,
  setExecutionState,
  setMissingTraceParents,
  transitionInstance,
  transitionInstances,
  type ActiveRun,
  type NewEvent,
  type NewExecution,
  type Queryable,
  type TaskRecord,
} from '@ax/store';
import { recordDeferred } from './backlog-deferral.js';
import { dropRefused, planClaim, type ClaimPlan, type PlanEffect, type Planned } from './claim-plan.js';
import type { BrokerContext } from './context.js';
import { startClaimSpans, type ClaimSpans } from './dispatch-spans.js';
import { reserveChosen, reserveShards, releaseFailedClaim, type Reserved } from './dispatch-slots.js';
import { claimFairly } from './fair-claim.js';
import { inTransaction } from './transaction.js';
import { uuidv7 } from './uuidv7.js';

/** What one iteration did (for tests and logs). */
export interface DispatchOutcome {
  readonly claimed: number;
  readonly dispatched: number;
  readonly waitingForWorker: number;
  /** Left PENDING because their team had its `maxRunning` runs (also counted in `deferred`). */
  readonly waitingForTeam: number;
  readonly canceled: number;
  readonly deferred: number;
}

export const EMPTY: DispatchOutcome = { claimed: 0, dispatched: 0, waitingForWorker: 0, waitingForTeam: 0, canceled: 0, deferred: 0 };

/** What a committed claim hands to the publish. */
export interface ClaimResult {
  /** Committed DISPATCHED, to publish (with their claim span as parent trace). */
  readonly planned: Planned[];
  readonly outcome: DispatchOutcome;
  /** Reservations made (kept for `planned`, given back for the rest by `settleCommitted`). */
  readonly reserved: Reserved[];
  /** Runs canceled COVERED (R4): their worker gets a cancel after the commit. */
  readonly cancels: ActiveRun[];
}

/**
 * Claims up to `granted` instances and commits their plan. `snapshots` is the worker snapshot
 * the claim size was computed from. On a failed transaction every slot it reserved goes back
 * before the error is thrown on.
 */
export async function claim(ctx: BrokerContext, granted: number, snapshots: readonly WorkerSnapshot[], bookkeepingLimit: number): Promise<ClaimResult> {
  const reserved: Reserved[] = [];
  const cancels: ActiveRun[] = [];
  let claimSpans: ClaimSpans | undefined;
  const claimStartMs = Date.now();
  let result: { planned: Planned[]; outcome: DispatchOutcome };
  try {
    result = await inTransaction(ctx, async (conn) => {
      // Teams with a maxRunning (none: no statement here at all). Those at their limit now are
      // left out of the claim, so their waiting instances do not fill every batch ahead of
      // other teams'; this read takes no lock and only steers the claim (the decision is below).
      const limits = ctx.teams.limited();
      const skipTeams = limits.size === 0 ? [] : teamsAtLimit(limits, await activeRunsByTeam(conn, [...limits.keys()]));
      // R23: per team, only what can start now, in weighted shares (fair-claim.ts); #22 backlog
      // deferral: held instances of the tasks the last pass saw are not claimed at all.
      const claimed = await claimFairly(conn, {
        limit: granted,
        workers: snapshots,
        skipTeams,
        defer: ctx.backlogHolds.claimFilter(),
        weightOf: (team) => ctx.teams.get(team).weight,
        bookkeepingLimit,
      });
      if (claimed.length === 0) return { planned: [] as Planned[], outcome: EMPTY };
      const tasks = await loadTasksById(conn, claimed.map((c) => c.taskId), ctx.definitions);
      const blocking = [...tasks.values()].filter((t) => t.definition.block !== 'parallel');
      await lockTasksForBlockCheck(conn, blocking.map((t) => t.id));
      const quota = await lockTeamQuota(conn, limits, tasks.values());
      const blockNames = blocking.map((t) => t.definition.name);
      const activeByTask = new Map<string, ActiveRun[]>();
      for (const run of await activeRunsOfTasks(conn, blockNames)) {
        activeByTask.set(run.taskName, [...(activeByTask.get(run.taskName) ?? []), run]);
      }
      // block {queue: N}: only the earliest waiting slot of the task may start (slot order).
      const queueHeads = await earliestWaitingSlots(conn, blocking.filter((t) => isQueueBlock(t.definition.block)).map((t) => t.definition.name));
      const batches = await rerunBatchLoads(conn, claimed.flatMap((c) => (c.rerunBatchId === null ? [] : [c.rerunBatchId])));
      const events: NewEvent[] = [];

      // The planner decides; its effects run here, at the point of the decision.
      const perform = async (effect: PlanEffect): Promise<unknown> => {
        switch (effect.kind) {
          case 'cancel': {
            const { instance } = effect;
            const won = await transitionInstance(conn, { id: instance.id, from: 'PENDING', to: 'CANCELED', set: { reason: effect.reason, ended_at: nowPlusMs(0) } });
            if (won) events.push({ instanceId: instance.id, type: 'CANCELED', message: effect.message, data: effect.data });
            return won;
          }
          case 'cover': {
            const { run, by } = effect;
            const won = await transitionInstance(conn, { id: run.id, from: run.state, to: 'CANCELED', set: { reason: 'COVERED', ended_at: nowPlusMs(0) } });
            if (!won) return false;
            events.push(
              { instanceId: run.id, type: 'CANCELED', executionId: run.executionId, workerId: run.workerId, message: `covered by instance ${by.id}`, data: { reason: 'COVERED' } },
              { instanceId: run.id, type: 'CANCEL_REQUESTED', executionId: run.executionId, workerId: run.workerId, message: 'block cover' },
            );
            if (run.executionId !== null) await setExecutionState(conn, [run.executionId], 'CANCEL_REQUESTED', 'COVERED', { ended: true });
            cancels.push(run);
            return true;
          }
          case 'reserveShards':
            return reserveShards(ctx, effect.shards, reserved);
          case 'cursor':
            return (await ctx.redis.incr(ctx.keys.roundRobin(effect.taskName))) - 1;
          case 'alert': {
            const { instance } = effect;
            await raiseAlert(conn, {
              kind: 'NO_WORKER',
              severity: 'warning',
              instanceId: instance.id,
              taskName: instance.taskName,
              message: `instance ${instance.id} of ${instance.taskName} has waited ${Math.round(instance.waitingMs / 1000)} s for a worker: ${effect.why}`,
            });
            return undefined;
          }
        }
      };
      const planner = planClaim({
        claimed,
        tasks,
        workers: snapshots,
        activeByTask,
        queueHeads,
        batches,
        quota,
        holdOf: (def, priority) => ctx.backlogHolds.holdOf(def, priority),
        noWorkerAlertMs: ctx.config.noWorkerAlertMs,
        random: ctx.random,
        newId: uuidv7,
      });
      let step = planner.next();
      while (step.done !== true) step = planner.next(await perform(step.value));
      const plan: ClaimPlan = step.value;

      // R9: one reservation call per worker for everything routed to it in this batch; what a
      // worker (filled meanwhile by another broker) refuses waits for the next iteration.
      dropRefused(plan, await reserveChosen(ctx, plan.workers, plan.plan.filter((p) => p.shard === undefined), reserved));
      const dispatched = await writePlan(ctx, conn, plan, quota, events);
      // #48: a claim span per run; a run without a trace context gets its claim span's.
      claimSpans = startClaimSpans(ctx.tracer, dispatched, claimStartMs);
      await setMissingTraceParents(conn, claimSpans.missing);
      return {
        planned: dispatched,
        outcome: {
          claimed: claimed.length,
          dispatched: dispatched.length,
          waitingForWorker: [...plan.noWorker.values()].reduce((n, ids) => n + ids.length, 0),
          waitingForTeam: [...plan.teamLimited.values()].reduce((n, ids) => n + ids.length, 0),
          canceled: plan.canceled,
          deferred: plan.deferred,
        },
      };
    });
  } catch (error) {
    await releaseFailedClaim(ctx, reserved);
    throw error;
  }
  const spans = claimSpans?.spans;
  const claimEndMs = Date.now();
  for (const span of spans?.values() ?? []) span.end(claimEndMs);
  const planned = spans === undefined ? result.planned : result.planned.map((p) => ({ ...p, parentTrace: spans.get(p.instance.id)?.traceparent ?? p.instance.traceParent ?? undefined }));
  return { planned, outcome: result.outcome, reserved, cancels };
}

/**
 * Writes the plan inside the claim transaction: what waits (R11, #22, DESIGN §11), the
 * executions, PENDING → DISPATCHED and the events. Returns the plans that moved.
 */
async function writePlan(ctx: BrokerContext, conn: Queryable, plan: ClaimPlan, quota: TeamQuota | null, events: NewEvent[]): Promise<Planned[]> {
  for (const [why, ids] of plan.noWorker) {
    const fresh = await recordNoWorker(conn, ids, why);
    ctx.metrics.noWorker.inc(fresh.length);
  }
  for (const { hold, ids } of plan.heldBack.values()) await recordDeferred(ctx, conn, ids, hold);
  for (const [team, ids] of plan.teamLimited) {
    await recordWaitingOnce(conn, 'TEAM_LIMIT', ids, `team ${team} has its maxRunning of ${quota?.limit(team) ?? '?'} instances DISPATCHED or RUNNING; waiting for one of them to end`);
  }
  const executions: NewExecution[] = plan.plan.map((p) => ({
    executionId: p.executionId,
    instanceId: p.instance.id,
    attempt: p.instance.attempt,
    runNo: p.instance.runNo,
    workerId: p.worker.id,
    shardIndex: p.shard?.index ?? null,
    shardTotal: p.shard?.total ?? null,
  }));
  await insertExecutions(conn, executions);
  const dispatched: Planned[] = [];
  const broadcastWon = new Map<string, boolean>();
  const singles: Planned[] = [];
  for (const p of plan.plan) {
    if (p.shard !== undefined) {
      // R21: the instance moves once; its shards are fenced by their own executions.
      let won = broadcastWon.get(p.instance.id);
      if (won === undefined) {
        won = await transitionInstance(conn, {
          id: p.instance.id,
          from: 'PENDING',
          to: 'DISPATCHED',
          set: {
            worker_id: null,
            current_execution_id: null,
            shard_total: p.shard.total,
            task_version: p.task.version, // the definition this dispatch sends (#47)
            dispatch_count: { expr: 'dispatch_count + 1' },
            ack_deadline: null,
            lease_until: null,
            reason: null,
            ...WAIT_ENDED,
          },
        });
        broadcastWon.set(p.instance.id, won);
      }
      if (!won) continue;
      dispatched.push(p);
      events.push({
        instanceId: p.instance.id,
        type: 'DISPATCHED',
        executionId: p.executionId,
        workerId: p.worker.id,
        message: `shard ${p.shard.index + 1} of ${p.shard.total}`,
        data: { attempt: p.instance.attempt, shardIndex: p.shard.index, shardTotal: p.shard.total },
      });
      continue;
    }
    singles.push(p);
  }
  // R10: every single-worker dispatch of the batch moves in one statement (rows are ours:
  // claimed FOR UPDATE SKIP LOCKED above).
  const moved = await transitionInstances(conn, {
    ids: singles.map((p) => p.instance.id),
    from: 'PENDING',
    to: 'DISPATCHED',
    perRow: {
      worker_id: new Map(singles.map((p) => [p.instance.id, p.worker.id])),
      current_execution_id: new Map(singles.map((p) => [p.instance.id, p.executionId])),
      // The version of the definition this dispatch sends (#47): an edit between creation
      // and dispatch (a manual run waiting in the backlog, a retry) runs the new one.
      task_version: new Map(singles.map((p) => [p.instance.id, p.task.version])),
    },
    set: {
      dispatch_count: { expr: 'dispatch_count + 1' },
      ack_deadline: nowPlusMs(ctx.config.ackTimeoutMs + ctx.config.publishAllowanceMs),
      lease_until: null,
      reason: null,
      ...WAIT_ENDED,
    },
  });
  for (const p of singles) {
    if (!moved.has(p.instance.id)) continue;
    dispatched.push(p);
    events.push({ instanceId: p.instance.id, type: 'DISPATCHED', executionId: p.executionId, workerId: p.worker.id, data: { attempt: p.instance.attempt } });
  }
  await appendEvents(conn, events);
  return dispatched;
}

/**
 * DESIGN §11 at claim: locks the rows of the limited teams among `tasks` (name order, after the
 * instance and task locks) and counts their active runs after the lock. Null, with no statement,
 * when none of them has a limit (the common case costs nothing). Two brokers dispatching for
 * one limited team therefore decide one after the other, each seeing the other's commit.
 */
async function lockTeamQuota(conn: Queryable, limits: ReadonlyMap<string, number>, tasks: Iterable<TaskRecord>): Promise<TeamQuota | null> {
  if (limits.size === 0) return null;
  const teams = new Set<string>();
  for (const t of tasks) if (limits.has(t.definition.team)) teams.add(t.definition.team);
  if (teams.size === 0) return null;
  const locked = await lockTeamLimits(conn, [...teams]);
  if (locked.size === 0) return null; // every limit was removed meanwhile
  return new TeamQuota(locked, await activeRunsByTeam(conn, [...locked.keys()]));
}

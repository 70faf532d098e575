/**
 * The dispatch loop (DESIGN §4): claim due PENDING instances, apply `maxLatenessSeconds` (R5)
 * and the block strategy (R4), route over the registry with slot reservations (R9), mark
 * DISPATCHED with a generous ACK deadline and an execution row, commit, publish one message per
 * worker (R10, mandatory, confirmed, by queue name on the default exchange: R24), then start the ACK deadline from the confirm (R8).
 * An instance without an eligible worker stays PENDING (R11); so does one whose team has its
 * `maxRunning` instances DISPATCHED or RUNNING (DESIGN §11, decided under the team rows' locks),
 * and one below `AX_BACKLOG_DEFER_BELOW_PRIORITY` while its pool's backlog holds (backlog-deferral.ts).
 */
import {
  MESSAGE_VERSION,
  TeamQuota,
  acceptedKeyVersions,
  broadcastTargets,
  canServe,
  encodeTrustedMessage,
  capacityOf,
  freeSlots,
  slotCapFor,
  idempotencyKeyOf,
  isQueueBlock,
  parseMessage,
  routeInstance,
  teamsAtLimit,
  type DispatchItem,
  type DispatchMessage,
  type WorkerSnapshot,
} from '@ax/core';
import { requestCancel, type ReturnedMessage } from '@ax/bus';
import { toError, type AxSpan } from '@ax/kit';
import { logTraceId, startClaimSpans, startDispatchSpan, type ClaimSpans } from './dispatch-spans.js';
import {
  activeRunsByTeam,
  activeRunsOfTasks,
  anyDuePending,
  appendEvents,
  earliestWaitingSlots,
  insertExecutions,
  isDispatchPaused,
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
  type ClaimedInstance,
  type NewEvent,
  type NewExecution,
  type Queryable,
  type TaskRecord,
} from '@ax/store';
import { recordDeferred, type PoolHold } from './backlog-deferral.js';
import { claimFairly } from './fair-claim.js';
import type { BrokerContext } from './context.js';
import { inTransaction } from './transaction.js';
import { extendAll, releaseAll } from './reservations.js';
import { bestEffort } from './best-effort.js';
import { giveTurn, takeTurn } from './dispatch-turn.js';
import { restartShardAckClocks } from './shard-queries.js';
import { uuidv7 } from './uuidv7.js';

/** One planned dispatch (for a broadcast task: one shard of it, R21). */
export interface Planned {
  readonly instance: ClaimedInstance;
  readonly task: TaskRecord;
  readonly worker: WorkerSnapshot;
  readonly executionId: string;
  /** Broadcast shard (R21). */
  readonly shard?: { readonly index: number; readonly total: number };
  /** The shard's own attempt when it differs from the instance's (a shard retry). */
  readonly attempt?: number;
  /** The `traceparent` its dispatch span is a child of (the claim span, #48); default the instance's. */
  readonly parentTrace?: string;
}

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

const EMPTY: DispatchOutcome = { claimed: 0, dispatched: 0, waitingForWorker: 0, waitingForTeam: 0, canceled: 0, deferred: 0 };

/** One dispatch iteration; returns what it did. Never publishes before the commit. */
export async function dispatchOnce(ctx: BrokerContext): Promise<DispatchOutcome> {
  const { config } = ctx;
  // Nothing due (an idle poll, a wake-up for work another broker took): one plain read
  // instead of the turn, the pause flag and an empty claim transaction.
  if (!(await anyDuePending(ctx.pool))) return EMPTY;
  const turnKey = ctx.keys.lock('dispatch');
  const turn = await takeTurn(ctx.redis, turnKey, config.brokerId);
  if (turn === 'busy') {
    // Another broker is claiming: look again right after its commit, not at the next poll.
    setTimeout(() => ctx.wakeDispatch(), TURN_RETRY_MS).unref();
    return EMPTY;
  }
  let held = turn === 'mine';
  const endTurn = async (): Promise<void> => {
    if (!held) return;
    held = false;
    await giveTurn(ctx.redis, turnKey, config.brokerId);
  };
  try {
    return await claimAndPublish(ctx, endTurn);
  } finally {
    await endTurn();
  }
}

/** How soon a broker that found the dispatch turn taken looks again. */
const TURN_RETRY_MS = 20;

/** Claims, routes and commits under the turn; `endTurn` is called after the commit, before the publish. */
async function claimAndPublish(ctx: BrokerContext, endTurn: () => Promise<void>): Promise<DispatchOutcome> {
  const { config, pool } = ctx;
  if (await isDispatchPaused(pool)) return EMPTY;
  const snapshots = (await ctx.workers.snapshots()).map((w) => ({ ...w }));
  const nowMs = performance.now();
  const size = claimSize(config.dispatchBatchSize, snapshots, nowMs - ctx.claimPace.lastSmallClaimAtMs, config.dispatchPollMs);
  if (size <= 0) return EMPTY;
  if (size === MIN_CLAIM) ctx.claimPace.lastSmallClaimAtMs = nowMs;
  const granted = await ctx.rateLimiter.take(size);
  if (granted <= 0) return EMPTY;
  const reserved: Array<{ workerId: string; executionId: string }> = [];
  const cancels: ActiveRun[] = [];
  let planned: Planned[];
  let outcome: DispatchOutcome;
  let claimSpans: ClaimSpans | undefined;
  const claimStartMs = Date.now();
  try {
    const result = await inTransaction(ctx, async (conn) => {
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
        bookkeepingLimit: MIN_CLAIM,
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
      const picked = new Set<string>();
      const events: NewEvent[] = [];
      const plan: Planned[] = [];
      const noWorker = new Map<string, string[]>();
      const teamLimited = new Map<string, string[]>();
      const heldBack = new Map<string, { hold: PoolHold; ids: string[] }>();
      let canceled = 0;
      let deferred = 0;

      for (const instance of claimed) {
        const task = tasks.get(instance.taskId);
        if (task === undefined) {
          if (await transitionInstance(conn, { id: instance.id, from: 'PENDING', to: 'CANCELED', set: { reason: 'TASK_DELETED', ended_at: nowPlusMs(0) } })) {
            events.push({ instanceId: instance.id, type: 'CANCELED', message: 'its task was deleted before it ran', data: { reason: 'TASK_DELETED' } });
            canceled++;
          }
          continue;
        }
        const def = task.definition;
        // R5: only the first attempt of a scheduled slot can be late, on the database clock.
        if (
          instance.trigger === 'schedule' &&
          instance.attempt === 1 &&
          def.maxLatenessSeconds !== null &&
          instance.lateMs > def.maxLatenessSeconds * 1000
        ) {
          if (await transitionInstance(conn, { id: instance.id, from: 'PENDING', to: 'CANCELED', set: { reason: 'TOO_LATE', ended_at: nowPlusMs(0) } })) {
            events.push({
              instanceId: instance.id,
              type: 'CANCELED',
              message: `claimed ${instance.lateMs} ms after its slot, over maxLatenessSeconds ${def.maxLatenessSeconds}`,
              data: { reason: 'TOO_LATE', lateMs: instance.lateMs },
            });
            canceled++;
          }
          continue;
        }
        // #22: below the deferral priority, an instance of a backlogged pool waits (backlog-deferral.ts).
        const hold = ctx.backlogHolds.holdOf(def, instance.priority);
        if (hold !== undefined) {
          const entry = heldBack.get(hold.pool) ?? { hold, ids: [] };
          entry.ids.push(instance.id);
          heldBack.set(hold.pool, entry);
          deferred++;
          continue;
        }
        // R4: the block strategy is enforced where a run starts.
        if (def.block !== 'parallel') {
          const running = activeByTask.get(def.name) ?? [];
          const busy = running.length > 0 || picked.has(def.name);
          if (def.block === 'serial' && busy) {
            deferred++;
            continue;
          }
          if (isQueueBlock(def.block) && (busy || instance.expectedTime.getTime() > (queueHeads.get(def.name) ?? Number.POSITIVE_INFINITY))) {
            deferred++;
            continue;
          }
          if (def.block === 'discard' && busy) {
            if (await transitionInstance(conn, { id: instance.id, from: 'PENDING', to: 'CANCELED', set: { reason: 'DISCARDED', ended_at: nowPlusMs(0) } })) {
              events.push({ instanceId: instance.id, type: 'CANCELED', message: 'block discard: an earlier instance still runs', data: { reason: 'DISCARDED' } });
              canceled++;
            }
            continue;
          }
          if (def.block === 'cover') {
            if (picked.has(def.name)) {
              deferred++;
              continue;
            }
            for (const run of running) {
              const won = await transitionInstance(conn, {
                id: run.id,
                from: run.state,
                to: 'CANCELED',
                set: { reason: 'COVERED', ended_at: nowPlusMs(0) },
              });
              if (!won) continue;
              events.push(
                { instanceId: run.id, type: 'CANCELED', executionId: run.executionId, workerId: run.workerId, message: `covered by instance ${instance.id}`, data: { reason: 'COVERED' } },
                { instanceId: run.id, type: 'CANCEL_REQUESTED', executionId: run.executionId, workerId: run.workerId, message: 'block cover' },
              );
              if (run.executionId !== null) await setExecutionState(conn, [run.executionId], 'CANCEL_REQUESTED', 'COVERED', { ended: true });
              cancels.push(run);
              canceled++;
              quota?.give(def.team); // the covered run no longer counts against its team
            }
            activeByTask.delete(def.name);
          }
        }
        // R20: a rerun batch never runs more than its concurrency at once.
        const batch = instance.rerunBatchId === null ? undefined : batches.get(instance.rerunBatchId);
        if (batch !== undefined && batch.concurrency !== null && batch.active >= batch.concurrency) {
          deferred++;
          continue;
        }
        // DESIGN §11: the team's maxRunning, counted under its row lock (lockTeamQuota).
        if (quota !== null && quota.isFull(def.team)) {
          teamLimited.set(def.team, [...(teamLimited.get(def.team) ?? []), instance.id]);
          deferred++;
          continue;
        }
        if (def.route === 'broadcast') {
          // R21: one execution per matching worker, all or nothing (see README "Broadcast").
          const shards = await planBroadcast(ctx, snapshots, instance, task);
          if (shards === 'busy') {
            deferred++;
            continue;
          }
          if (shards !== 'none') {
            if (batch !== undefined && instance.rerunBatchId !== null) batches.set(instance.rerunBatchId, { ...batch, active: batch.active + 1 });
            quota?.take(def.team);
            picked.add(def.name);
            plan.push(...shards);
            continue;
          }
        }
        const pick = def.route === 'broadcast' ? null : await chooseWorker(ctx, snapshots, instance, task);
        if (pick === null && busyOnly(snapshots, def)) {
          // Workers that could take it exist but every slot is reserved (R9): backpressure,
          // not R11's "no worker" — it waits silently for a result to free a slot.
          deferred++;
          continue;
        }
        if (pick === null) {
          const why = routeExplanation(snapshots, task, instance);
          noWorker.set(why, [...(noWorker.get(why) ?? []), instance.id]);
          if (instance.waitingMs > ctx.config.noWorkerAlertMs) {
            await raiseAlert(conn, {
              kind: 'NO_WORKER',
              severity: 'warning',
              instanceId: instance.id,
              taskName: instance.taskName,
              message: `instance ${instance.id} of ${instance.taskName} has waited ${Math.round(instance.waitingMs / 1000)} s for a worker: ${why}`,
            });
          }
          continue;
        }
        picked.add(def.name);
        if (batch !== undefined && instance.rerunBatchId !== null) batches.set(instance.rerunBatchId, { ...batch, active: batch.active + 1 });
        quota?.take(def.team);
        plan.push({ instance, task, worker: pick.worker, executionId: pick.executionId });
      }

      // R9: one reservation call per worker for everything routed to it in this batch; what a
      // worker (filled meanwhile by another broker) refuses waits for the next iteration.
      const refused = await reserveChosen(ctx, snapshots, plan.filter((p) => p.shard === undefined));
      if (refused.size > 0) {
        deferred += refused.size;
        for (let i = plan.length - 1; i >= 0; i--) if (refused.has((plan[i] as Planned).executionId)) plan.splice(i, 1);
      }
      for (const [why, ids] of noWorker) {
        const fresh = await recordNoWorker(conn, ids, why);
        ctx.metrics.noWorker.inc(fresh.length);
      }
      for (const { hold, ids } of heldBack.values()) await recordDeferred(ctx, conn, ids, hold);
      for (const [team, ids] of teamLimited) {
        await recordWaitingOnce(conn, 'TEAM_LIMIT', ids, `team ${team} has its maxRunning of ${quota?.limit(team) ?? '?'} instances DISPATCHED or RUNNING; waiting for one of them to end`);
      }
      const executions: NewExecution[] = plan.map((p) => ({
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
      for (const p of plan) {
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
      // #48: a claim span per run; a run without a trace context gets its claim span's.
      claimSpans = startClaimSpans(ctx.tracer, dispatched, claimStartMs);
      await setMissingTraceParents(conn, claimSpans.missing);
      return {
        planned: dispatched,
        outcome: {
          claimed: claimed.length,
          dispatched: dispatched.length,
          waitingForWorker: [...noWorker.values()].reduce((n, ids) => n + ids.length, 0),
          waitingForTeam: [...teamLimited.values()].reduce((n, ids) => n + ids.length, 0),
          canceled,
          deferred,
        },
      };
    });
    const spans = claimSpans?.spans;
    const claimEndMs = Date.now();
    for (const span of spans?.values() ?? []) span.end(claimEndMs);
    planned = spans === undefined ? result.planned : result.planned.map((p) => ({ ...p, parentTrace: spans.get(p.instance.id)?.traceparent ?? p.instance.traceParent ?? undefined }));
    outcome = result.outcome;
  } catch (error) {
    await bestEffort(ctx.logger, 'slots of a failed claim', [() => releaseAll(ctx.reservations, reserved)]);
    throw error;
  }
  // Reservations made for plans that did not survive (lost race) are given back; the kept
  // ones now cover the publish allowance too (see PRE_COMMIT_RESERVATION_MS). None of this
  // may stop the publish of what is committed (best-effort.ts).
  const kept = new Set(planned.map((p) => p.executionId));
  await bestEffort(ctx.logger, 'slots and rate of a committed dispatch', [
    () => releaseAll(ctx.reservations, reserved.filter((r) => !kept.has(r.executionId))),
    () => extendAll(ctx.reservations, reserved.filter((r) => kept.has(r.executionId)), ctx.config.ackTimeoutMs + ctx.config.publishAllowanceMs + ctx.config.ackGraceMs),
    () => ctx.rateLimiter.refund(granted - planned.length),
  ]);
  await endTurn(); // committed and reservations settled: the next broker may claim while this one publishes
  await Promise.all([publishPlanned(ctx, planned), ...cancels.map((run) => cancelRun(ctx, run, 'COVERED'))]);
  // A full claim that moved something: more may be waiting, go again at once. One that only
  // deferred (every slot taken, serial tasks busy) waits for a result or the poll: going again
  // at once re-claimed the same rows in a loop.
  if (outcome.claimed >= granted && granted > 0 && outcome.dispatched + outcome.canceled > 0) ctx.wakeDispatch();
  return outcome;

  /**
   * R21 at claim: every non-draining worker carrying the task's tags gets one shard. When any
   * of them is full the instance waits ('busy', R9 backpressure); reservations are all or
   * nothing. 'none' = no matching worker (R11).
   */
  async function planBroadcast(c: BrokerContext, workers: WorkerSnapshot[], instance: ClaimedInstance, task: TaskRecord): Promise<Planned[] | 'busy' | 'none'> {
    const request = { tags: task.definition.tags, team: task.definition.team };
    const matching = workers.filter((w) => canServe(w, request));
    if (matching.length === 0) return 'none';
    if (matching.some((w) => freeSlots(w) <= 0)) return 'busy';
    const targets = broadcastTargets(workers, request);
    if (targets.length !== matching.length) return 'busy';
    const ttl = PRE_COMMIT_RESERVATION_MS;
    const got: Array<{ workerId: string; executionId: string }> = [];
    for (const t of targets) {
      const executionId = uuidv7();
      const ok = await c.reservations.reserve(t.worker.id, slotCapFor(t.worker, undefined), [executionId], ttl);
      if (ok !== 1) {
        // Another broker filled it meanwhile: give back what this instance took, wait.
        await releaseAll(c.reservations, got);
        const full = workers.find((w) => w.id === t.worker.id);
        if (full !== undefined) full.running = capacityOf(full);
        return 'busy';
      }
      got.push({ workerId: t.worker.id, executionId });
    }
    reserved.push(...got);
    return targets.map((t, i) => {
      const target = workers.find((w) => w.id === t.worker.id);
      if (target !== undefined) target.running += 1;
      return { instance, task, worker: t.worker, executionId: (got[i] as { executionId: string }).executionId, shard: { index: t.shardIndex, total: t.shardTotal } };
    });
  }

  /**
   * Routes one instance over the in-memory snapshot (counting it against the chosen worker's
   * free slots); the reservation (R9) is made per worker for the whole batch by `reserveChosen`.
   */
  async function chooseWorker(
    c: BrokerContext,
    workers: WorkerSnapshot[],
    instance: ClaimedInstance,
    task: TaskRecord,
  ): Promise<{ worker: WorkerSnapshot; executionId: string } | null> {
    const def = task.definition;
    const exclude = instance.rerouteCount > 0 && instance.workerId !== null ? [instance.workerId] : [];
    const strategy = def.route === 'broadcast' ? 'load' : def.route;
    const cursor = strategy === 'round_robin' ? (await c.redis.incr(c.keys.roundRobin(def.name))) - 1 : 0;
    const priority = instance.priority;
    let decision = routeInstance(strategy, workers, { tags: def.tags, team: def.team, priority, exclude }, { random: c.random, cursor, hashKey: def.name });
    if (decision.kind === 'none' && exclude.length > 0) {
      // The silent worker is the only one left: better it than waiting forever.
      decision = routeInstance(strategy, workers, { tags: def.tags, team: def.team, priority }, { random: c.random, cursor, hashKey: def.name });
    }
    if (decision.kind !== 'single') return null;
    const chosen = decision.worker;
    const target = workers.find((w) => w.id === chosen.id);
    if (target !== undefined) target.running += 1;
    return { worker: chosen, executionId: uuidv7() };
  }

  /**
   * Reserves the slots of the routed plan, one Lua call per worker; returns the execution ids
   * a worker refused (it filled up meanwhile: never beyond its slots). Reservations made are
   * remembered in `reserved` so that a failed transaction gives them back.
   */
  async function reserveChosen(c: BrokerContext, workers: WorkerSnapshot[], chosen: readonly Planned[]): Promise<Set<string>> {
    const byWorker = new Map<string, { workerId: string; slots: number; ids: string[] }>();
    // One reservation per worker and cap: below a worker's reserve priority the cap leaves its
    // reserved slots free (`slotCapFor`), so the Lua check holds that line across brokers too.
    for (const p of chosen) {
      const slots = slotCapFor(p.worker, p.instance.priority);
      const key = `${p.worker.id}\u0000${slots}`;
      const entry = byWorker.get(key) ?? { workerId: p.worker.id, slots, ids: [] };
      entry.ids.push(p.executionId);
      byWorker.set(key, entry);
    }
    const ttl = PRE_COMMIT_RESERVATION_MS;
    const refused = new Set<string>();
    await Promise.all(
      [...byWorker.values()].map(async ({ workerId, slots, ids }) => {
        const granted = await c.reservations.reserve(workerId, slots, ids, ttl);
        for (const id of ids.slice(0, granted)) reserved.push({ workerId, executionId: id });
        for (const id of ids.slice(granted)) refused.add(id);
        if (granted < ids.length) {
          const target = workers.find((w) => w.id === workerId);
          if (target !== undefined) target.running = capacityOf(target);
        }
      }),
    );
    return refused;
  }
}

/**
 * How many instances to claim: no more than the free slots of the routable workers, since
 * what cannot be routed is only locked, read with its task and let go (at full load most of a
 * 500-row claim was, and half the claims found every slot taken). At least `MIN_CLAIM`, so
 * instances that need no slot (late, discarded, of a deleted task) and R11's `NO_WORKER`
 * bookkeeping still move; while every slot is taken, such a small claim runs at most once per
 * `minIntervalMs` (0 = skip this time).
 */
export function claimSize(batchSize: number, workers: readonly WorkerSnapshot[], sinceSmallClaimMs: number, minIntervalMs: number): number {
  let free = 0;
  for (const w of workers) if (!w.draining) free += Math.max(0, freeSlots(w));
  if (free === 0 && workers.some((w) => !w.draining) && sinceSmallClaimMs < minIntervalMs) return 0;
  return Math.min(batchSize, Math.max(MIN_CLAIM, free));
}

/** The smallest claim (see `claimSize`). */
export const MIN_CLAIM = 20;

/** True when some non-draining worker serving the team carries the tags (but none had a free slot). */
function busyOnly(workers: readonly WorkerSnapshot[], def: { readonly tags: readonly string[]; readonly team: string }): boolean {
  return workers.some((w) => canServe(w, def));
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

function routeExplanation(workers: readonly WorkerSnapshot[], task: TaskRecord, instance: ClaimedInstance): string {
  const decision = routeInstance('load', workers, { tags: task.definition.tags, team: task.definition.team }, { random: () => 0 });
  return decision.kind === 'none' ? decision.explanation : `no worker with a free slot could be reserved for instance ${instance.id}`;
}

/**
 * How long a slot reserved inside the claim transaction lives until the commit extends it. A
 * broker killed inside that transaction leaves reservations nobody releases, and since a claim
 * takes every free slot (`claimSize`) they hold every worker full for this long: 38 s with the
 * publish allowance, 18 s with ACK timeout + grace + 10 s (fault drill 3). The claim
 * transaction takes well under a second. One that outlives this (lock waits) dispatches
 * without the expired reservations; the worker then queues locally and an item that waits
 * past its ACK deadline is refused EXPIRED and re-routed (R8).
 */
const PRE_COMMIT_RESERVATION_MS = 5_000;

/** Builds the dispatch item of a planned instance. */
function itemOf(ctx: BrokerContext, p: Planned, ackDeadline: Date, traceparent: string): DispatchItem {
  const expectedTime = p.instance.expectedTime.toISOString();
  const team = ctx.teams.get(p.task.definition.team);
  const grace = team.previousKeyValidUntil;
  return {
    ...(p.shard === undefined ? {} : { shardIndex: p.shard.index, shardTotal: p.shard.total }),
    executionId: p.executionId,
    instanceId: p.instance.id,
    taskName: p.instance.taskName,
    taskId: p.instance.taskId,
    team: team.name,
    keyVersion: team.keyVersion,
    // the team row's list, never the task's (#44): the worker narrows its allowlist with it
    ...(team.httpAllow === null ? {} : { httpAllow: [...team.httpAllow] }),
    ...(grace !== null && acceptedKeyVersions(team, p.instance.dbNow.getTime()).length > 1 ? { previousKeyValidUntil: grace.toISOString() } : {}),
    expectedTime,
    bizDate: p.instance.bizDate,
    attempt: p.attempt ?? p.instance.attempt,
    maxAttempts: p.instance.maxAttempts,
    runNo: p.instance.runNo,
    priority: Math.min(9, Math.max(0, p.instance.priority)),
    params: p.instance.params,
    exec: p.task.definition.exec,
    timeoutSeconds: p.task.definition.timeoutSeconds,
    ackDeadline: ackDeadline.toISOString(),
    traceId: logTraceId(traceparent, p.executionId),
    traceparent,
    idempotencyKey: idempotencyKeyOf(p.instance.taskName, expectedTime, p.instance.runNo),
    // This broker stores output that results carry (result-output.ts): a short job's output
    // needs no `log` message.
    outputInResult: true,
  };
}

/** Publishes the plan, one message per worker and chunk (R10), then queues the start of the ACK deadlines (R8, `ack-clocks.ts`). */
export async function publishPlanned(ctx: BrokerContext, planned: readonly Planned[]): Promise<void> {
  const byWorker = new Map<string, Planned[]>();
  for (const p of planned) byWorker.set(p.worker.id, [...(byWorker.get(p.worker.id) ?? []), p]);
  const chunks: Planned[][] = [];
  for (const list of byWorker.values()) {
    for (let i = 0; i < list.length; i += ctx.config.maxItemsPerDispatch) chunks.push(list.slice(i, i + ctx.config.maxItemsPerDispatch));
  }
  await Promise.all(
    chunks.map(async (chunk) => {
      const first = chunk[0] as Planned;
      const messageDeadline = new Date(first.instance.dbNow.getTime() + ctx.config.ackTimeoutMs);
      const spans = chunk.map((p) =>
        startDispatchSpan(ctx.tracer, p.parentTrace ?? p.instance.traceParent, { executionId: p.executionId, workerId: p.worker.id, attempt: p.attempt ?? p.instance.attempt, shardIndex: p.shard?.index }),
      );
      const message: DispatchMessage = {
        v: MESSAGE_VERSION,
        kind: 'dispatch',
        workerId: first.worker.id,
        items: chunk.map((p, i) => itemOf(ctx, p, messageDeadline, (spans[i] as AxSpan).traceparent)),
      };
      try {
      // Trusted: every part of an item comes from a validated definition or a stored instance
      // (validated when created); the worker validates the message again on receipt.
      // By queue name on the default exchange (R24): no binding needed, so enrolled workers get
      // it; mandatory, so a queue that is gone returns it (R8, handleReturned).
        await ctx.bus.publish('', ctx.bus.topology.workerQueue(first.worker.id), encodeTrustedMessage(message), {
          mandatory: true,
          priority: Math.max(...chunk.map((p) => p.instance.priority)),
          messageId: first.executionId,
        });
      } catch (error) {
        for (const span of spans) span.fail(toError(error).message);
        throw error;
      } finally {
        const endMs = Date.now();
        for (const span of spans) span.end(endMs);
      }
      ctx.metrics.dispatchMessages.inc();
      ctx.metrics.dispatches.inc({ worker: first.worker.id }, chunk.length);
      ctx.ackClocks.confirmed(
        chunk.map((p) => ({ instanceId: p.instance.id, executionId: p.executionId })),
        messageDeadline,
      );
      await restartShardAckClocks(ctx.pool, chunk.flatMap((p) => (p.shard === undefined ? [] : [p.executionId])));
    }),
  );
}

/** Cancels a covered or superseded run on its worker (best effort: lease expiry is the backstop). */
export async function cancelRun(ctx: BrokerContext, run: ActiveRun, reason: string): Promise<void> {
  if (run.workerId === null || run.executionId === null) return;
  try {
    await ctx.reservations.release(run.workerId, [run.executionId]);
    await requestCancel(ctx.bus, { workerId: run.workerId, executionIds: [run.executionId], reason });
  } catch (error) {
    ctx.logger.warn({ err: toError(error), executionId: run.executionId, workerId: run.workerId }, 'cancel not sent');
  }
}

/**
 * R8: a dispatch that came back unroutable (its worker's queue is gone) is re-routed without
 * counting: DISPATCHED → PENDING fenced by its execution, RETURNED event, slot released.
 */
export async function handleReturned(ctx: BrokerContext, returned: ReturnedMessage): Promise<void> {
  const parsed = parseMessage(returned.body);
  if (!parsed.ok || parsed.message.kind !== 'dispatch') return;
  const message = parsed.message;
  ctx.workers.markUnroutable(message.workerId, 5_000);
  const rerouted: string[] = [];
  await inTransaction(ctx, async (conn) => {
    const events: NewEvent[] = [];
    for (const item of message.items) {
      const won = await transitionInstance(conn, {
        id: item.instanceId,
        from: 'DISPATCHED',
        to: 'PENDING',
        fenceExecutionId: item.executionId,
        set: { ack_deadline: null },
      });
      if (!won) continue;
      rerouted.push(item.executionId);
      events.push({ instanceId: item.instanceId, type: 'RETURNED', executionId: item.executionId, workerId: message.workerId, message: 'unroutable: the worker queue is gone; re-routed without counting' });
    }
    await setExecutionState(conn, rerouted, 'RETURNED', 'UNROUTABLE', { ended: true, onlyFrom: ['DISPATCHED'] });
    await appendEvents(conn, events);
  });
  await ctx.reservations.release(message.workerId, message.items.map((i) => i.executionId));
  ctx.metrics.returned.inc(rerouted.length);
  if (rerouted.length > 0) ctx.wakeDispatch();
}

/**
 * DESIGN R21, broadcast: one instance, one execution per matching worker (`shard_index`,
 * `shard_total`). The instance row carries the run (DISPATCHED → RUNNING → SUCCESS/FAILED,
 * `current_execution_id` NULL, `shard_total` set); each shard is fenced by its own current
 * execution = the latest `task_execution` row of (instance, run_no, shard_index). A failed
 * shard retries alone (a new RETRY_WAIT execution of that shard, re-dispatched by the timers)
 * within the attempt budget; a shard's final failure fails the instance and cancels the others.
 */
import { DEFAULT_RETRY, retryDelayMs, type Reason, type ResultItem, type WorkerSnapshot } from '@ax/core';
import { requestCancel } from '@ax/bus';
import { toError } from '@ax/kit';
import { readRegistration } from '@ax/redis';
import {
  NOW,
  loadTasksById,
  markExecutionAcked,
  pauseTaskAfterFailures,
  raiseAlert,
  setExecutionState,
  transitionInstance,
  appendEvents,
  countShardAckTimeouts,
  dispatchShardRetry,
  insertShardExecution,
  latestShardExecutions,
  loadInstancesForDispatch,
  inFlightBroadcasts,
  scanShardAckExpired,
  scanShardRetryDue,
  scanShardsRunning,
  type ExecutionWithInstance,
  type NewEvent,
  type Queryable,
  type TimedShard,
} from '@ax/store';
import type { BrokerContext } from './context.js';
import type { Planned } from './claim-plan.js';
import { publishPlanned } from './dispatch-publish.js';
import { decideExpiredDispatchOf, type WorkerReadings } from './gone-dispatches.js';
import { inTransaction } from './transaction.js';
import { bestEffort } from './best-effort.js';
import { releaseAll } from './reservations.js';
import { uuidv7 } from './uuidv7.js';
import { failureOf } from './result-failure.js';

const LIVE = new Set(['DISPATCHED', 'RUNNING', 'ASYNC']);
const SCAN_LIMIT = 200;

/** Side effects of reply handling, as replies.ts collects them. */
export interface ShardEffects {
  releases: Array<{ workerId: string; executionId: string }>;
  extends: Array<{ workerId: string; executionId: string; ttlMs: number }>;
  cancels: Array<{ workerId: string; executionId: string; reason: string }>;
  finishedTasks: Set<string>;
  finishedDates: Set<string>;
  wake: boolean;
}

/** True when the execution belongs to the current run and no later execution of its shard exists. */
function isCurrentShard(r: ExecutionWithInstance): boolean {
  return r.latestOfShard && r.executionRunNo === r.runNo;
}

/** An ACK of a shard execution. */
export async function applyShardAck(ctx: BrokerContext, conn: Queryable, workerId: string, r: ExecutionWithInstance, events: NewEvent[], effects: ShardEffects): Promise<void> {
  const base = { instanceId: r.instanceId, executionId: r.executionId, workerId };
  if (!isCurrentShard(r) || !LIVE.has(r.executionState)) {
    if (r.endedAt === null) await setExecutionState(conn, [r.executionId], 'SUPERSEDED', 'SUPERSEDED', { ended: true });
    events.push({ ...base, type: 'FENCED', message: `ACK of a superseded execution of shard ${r.executionShardIndex ?? '?'}; cancel sent` });
    effects.cancels.push({ workerId, executionId: r.executionId, reason: 'SUPERSEDED' });
    effects.releases.push({ workerId, executionId: r.executionId });
    ctx.metrics.fenced.inc({ kind: 'ack' });
    return;
  }
  if (!(await markExecutionAcked(conn, r.executionId))) return;
  events.push({ ...base, type: 'ACKED', message: `shard ${(r.executionShardIndex ?? 0) + 1} of ${r.executionShardTotal ?? '?'}` });
  ctx.metrics.ackLatency.observe(Math.max(0, r.sinceDispatchMs) / 1000);
  effects.extends.push({ workerId, executionId: r.executionId, ttlMs: (r.timeoutSeconds ?? 3_600) * 1000 + ctx.config.leaseTtlMs + ctx.config.lostWorkerGraceMs });
  if (r.state === 'DISPATCHED') {
    await transitionInstance(conn, {
      id: r.instanceId,
      from: 'DISPATCHED',
      to: 'RUNNING',
      set: { started_at: { expr: 'COALESCE(started_at, NOW(3))' } },
    });
  }
}

/**
 * A (non-async) result of a shard execution, already recorded on its row. A result of a
 * superseded execution of the shard, or of an earlier run, changes nothing (FENCED).
 */
export async function applyShardResult(
  ctx: BrokerContext,
  conn: Queryable,
  item: ResultItem,
  r: ExecutionWithInstance,
  events: NewEvent[],
  effects: ShardEffects,
): Promise<void> {
  const workerId = r.executionWorkerId;
  const shard = r.executionShardIndex ?? 0;
  const total = r.executionShardTotal ?? r.shardTotal ?? 1;
  const base = { instanceId: r.instanceId, executionId: item.executionId, workerId };
  const active = r.state === 'DISPATCHED' || r.state === 'RUNNING';
  if (!isCurrentShard(r) || !active) {
    events.push({ ...base, type: 'FENCED', message: `result ${item.outcome} of a superseded execution of shard ${shard + 1} recorded, not applied`, data: { outcome: item.outcome, shardIndex: shard } });
    ctx.metrics.fenced.inc({ kind: 'result' });
    return;
  }
  if (item.outcome === 'SUCCESS') {
    events.push({ ...base, type: 'SUCCEEDED', message: `shard ${shard + 1} of ${total} succeeded`, data: { shardIndex: shard, shardTotal: total } });
    const shards = await latestShardExecutions(conn, r.instanceId, r.runNo);
    const all = r.shardTotal ?? total;
    if (shards.length === all && shards.every((s) => s.state === 'SUCCESS')) {
      const won = await transitionInstance(conn, {
        id: r.instanceId,
        from: r.state,
        to: 'SUCCESS',
        set: { reason: null, ended_at: NOW, ack_deadline: null, lease_until: null, started_at: { expr: 'COALESCE(started_at, NOW(3))' } },
      });
      if (won) {
        events.push({ instanceId: r.instanceId, type: 'SUCCEEDED', message: `all ${all} shards succeeded`, data: { shardTotal: all } });
        finished(effects, r);
      }
    }
    return;
  }
  const failure = failureOf(item);
  const shardAttempt = r.executionAttempt;
  if (shardAttempt < r.maxAttempts) {
    const delayMs = retryDelayMs(r.retry ?? DEFAULT_RETRY, shardAttempt, ctx.random, ctx.config.backoffCapMs);
    await insertShardExecution(conn, {
      executionId: uuidv7(),
      instanceId: r.instanceId,
      attempt: shardAttempt + 1,
      runNo: r.runNo,
      shardIndex: shard,
      shardTotal: total,
      workerId,
      state: 'RETRY_WAIT',
      delayMs,
    });
    events.push(
      { ...base, type: failure.eventType, message: `shard ${shard + 1} of ${total}: ${failure.message}`, data: { reason: failure.reason, attempt: shardAttempt, shardIndex: shard } },
      { ...base, type: 'RETRY_SCHEDULED', message: `shard ${shard + 1} alone retries in ${delayMs} ms`, data: { delayMs, nextAttempt: shardAttempt + 1, shardIndex: shard } },
    );
    ctx.metrics.retries.inc({ cause: failure.reason });
    return;
  }
  const sink: Array<{ workerId: string; executionId: string }> = [];
  const won = await failBroadcast(ctx, conn, { instanceId: r.instanceId, taskName: r.taskName, runNo: r.runNo, state: r.state }, failure.reason, `shard ${shard + 1} of ${total} failed for good after attempt ${shardAttempt}/${r.maxAttempts}: ${failure.message}`, sink);
  events.push({ ...base, type: failure.eventType, message: failure.message, data: { reason: failure.reason, attempt: shardAttempt, shardIndex: shard, final: true } });
  if (won) {
    for (const c of sink) {
      effects.cancels.push({ ...c, reason: 'SHARD_FAILED' });
      effects.releases.push(c);
    }
    finished(effects, r);
  }
}

/**
 * Final failure of a broadcast run: the instance FAILED, the other live shards canceled (their
 * workers pushed to `cancels`), waiting shard retries dropped, a FINAL_FAILURE alert.
 */
export async function failBroadcast(
  ctx: BrokerContext,
  conn: Queryable,
  inst: { instanceId: string; taskName: string; runNo: number; state: 'DISPATCHED' | 'RUNNING' },
  reason: Reason,
  message: string,
  cancels: Array<{ workerId: string; executionId: string }>,
): Promise<boolean> {
  const won = await transitionInstance(conn, {
    id: inst.instanceId,
    from: inst.state,
    to: 'FAILED',
    set: { reason, ended_at: NOW, ack_deadline: null, lease_until: null },
  });
  if (!won) return false;
  const shards = await latestShardExecutions(conn, inst.instanceId, inst.runNo);
  const live = shards.filter((s) => LIVE.has(s.state));
  await setExecutionState(conn, live.map((s) => s.executionId), 'CANCEL_REQUESTED', 'SHARD_FAILED', { ended: true });
  await setExecutionState(conn, shards.filter((s) => s.state === 'RETRY_WAIT').map((s) => s.executionId), 'CANCELED', 'SHARD_FAILED', { ended: true });
  cancels.push(...live.map((s) => ({ workerId: s.workerId, executionId: s.executionId })));
  await raiseAlert(conn, {
    kind: 'FINAL_FAILURE',
    severity: 'critical',
    instanceId: inst.instanceId,
    taskName: inst.taskName,
    message: `${inst.taskName} instance ${inst.instanceId} (broadcast) failed (${reason}): ${message}`.slice(0, 2_000),
  });
  // pauseAfterFailures (#22); schedulers learn of a pause through the version guard (R3).
  await pauseTaskAfterFailures(conn, inst.instanceId);
  return true;
}

function finished(effects: ShardEffects, r: ExecutionWithInstance): void {
  effects.finishedTasks.add(r.taskName);
  effects.finishedDates.add(r.bizDate);
}

/** What one pass of the shard timers did. */
export interface ShardTimersOutcome {
  readonly retried: number;
  readonly rerouted: number;
  readonly lost: number;
  readonly failed: number;
}

/**
 * The timed transitions of shards (R7, R21): due shard retries are re-dispatched (to the
 * shard's worker, or — when it left — another matching worker not running a shard of the
 * instance); a shard not ACKed in time is re-routed alone (capped) or fails the instance; a
 * RUNNING shard whose worker's registry entry no longer lists it is LOST_WORKER (a failed
 * attempt of that shard). ACK and lease checks only when `expiry` (R14 suspension).
 */
export async function runShardTimers(ctx: BrokerContext, expiry: boolean, workers: WorkerReadings): Promise<ShardTimersOutcome> {
  const snapshots = (await ctx.workers.snapshots()).map((w) => ({ ...w }));
  const toPublish: Planned[] = [];
  const reserved: Array<{ workerId: string; executionId: string }> = [];
  const releases: Array<{ workerId: string; executionId: string }> = [];
  const cancels: Array<{ workerId: string; executionId: string }> = [];
  const finishedTasks = new Set<string>();
  const finishedDates = new Set<string>();
  const counts = { retried: 0, rerouted: 0, lost: 0, failed: 0 };
  try {
    await inTransaction(ctx, async (conn) => {
      const events: NewEvent[] = [];
      const broadcasts = await inFlightBroadcasts(conn);
      if (broadcasts.length === 0) return;
      const due = await scanShardRetryDue(conn, broadcasts, SCAN_LIMIT);
      const ackExpired = expiry ? await scanShardAckExpired(conn, broadcasts, ctx.config.ackTimeoutMs + ctx.config.ackGraceMs, SCAN_LIMIT) : [];
      const running = expiry ? await scanShardsRunning(conn, broadcasts, ctx.config.leaseTtlMs + ctx.config.lostWorkerGraceMs, SCAN_LIMIT) : [];
      const all = [...due, ...ackExpired, ...running];
      if (all.length === 0) return;
      const instances = await loadInstancesForDispatch(conn, all.map((s) => s.instanceId));
      const tasks = await loadTasksById(conn, all.map((s) => s.taskId), ctx.definitions);
      const failedInstances = new Set<string>();

      const pick = async (s: TimedShard, prefer: string | null, exclude: readonly string[]): Promise<WorkerSnapshot | null> => {
        const task = tasks.get(s.taskId);
        if (task === undefined) return null;
        const shards = await latestShardExecutions(conn, s.instanceId, s.runNo);
        // One worker, one shard of a run: a worker that holds another shard of it never takes this one.
        const busy = new Set([...exclude, ...shards.filter((x) => x.shardIndex !== s.shardIndex).map((x) => x.workerId)]);
        const tags = task.definition.tags;
        const candidates = snapshots
          .filter((w) => !w.draining && tags.every((t) => w.tags.includes(t)) && !busy.has(w.id) && w.running < w.slots)
          .sort((a, b) => (a.id === prefer ? -1 : b.id === prefer ? 1 : a.running / Math.max(1, a.slots) - b.running / Math.max(1, b.slots)));
        const own = prefer === null ? undefined : snapshots.find((w) => w.id === prefer);
        // The shard's own worker is there but full: wait for it rather than move the shard.
        if (own !== undefined && !own.draining && !busy.has(own.id) && tags.every((t) => own.tags.includes(t)) && own.running >= own.slots) return null;
        for (const w of candidates) {
          const ttl = ctx.config.ackTimeoutMs + ctx.config.publishAllowanceMs + ctx.config.ackGraceMs;
          if ((await ctx.reservations.reserve(w.id, w.slots, [s.executionId], ttl)) === 1) {
            w.running += 1;
            return w;
          }
          w.running = w.slots;
        }
        return null;
      };
      const plan = (s: TimedShard, worker: WorkerSnapshot, executionId: string, attempt: number): void => {
        const instance = instances.get(s.instanceId);
        const task = tasks.get(s.taskId);
        if (instance === undefined || task === undefined) return;
        toPublish.push({ instance, task, worker, executionId, shard: { index: s.shardIndex, total: s.shardTotal }, attempt });
      };
      const fail = async (s: TimedShard, reason: Reason, message: string): Promise<void> => {
        if (failedInstances.has(s.instanceId)) return;
        const sink: Array<{ workerId: string; executionId: string }> = [];
        if (await failBroadcast(ctx, conn, { instanceId: s.instanceId, taskName: s.taskName, runNo: s.runNo, state: s.instanceState }, reason, message, sink)) {
          failedInstances.add(s.instanceId);
          cancels.push(...sink);
          finishedTasks.add(s.taskName);
          finishedDates.add(s.bizDate);
          counts.failed++;
        }
      };

      for (const s of due) {
        if (failedInstances.has(s.instanceId)) continue;
        const worker = await pick(s, s.workerId, []);
        if (worker === null) continue; // waits: R9 backpressure / R11
        reserved.push({ workerId: worker.id, executionId: s.executionId });
        if (!(await dispatchShardRetry(conn, s.executionId, worker.id))) continue;
        events.push({ instanceId: s.instanceId, type: 'DISPATCHED', executionId: s.executionId, workerId: worker.id, message: `shard ${s.shardIndex + 1} of ${s.shardTotal} (retry)`, data: { attempt: s.attempt, shardIndex: s.shardIndex, shardTotal: s.shardTotal } });
        plan(s, worker, s.executionId, s.attempt);
        counts.retried++;
      }

      for (const s of ackExpired) {
        if (failedInstances.has(s.instanceId)) continue;
        // #23: a shard its worker may hold or have started is not re-routed behind its back.
        const ackDeadline = s.dispatchedAt === null ? null : new Date(s.dispatchedAt.getTime() + ctx.config.ackTimeoutMs);
        const decision = decideExpiredDispatchOf(ctx, workers, { workerId: s.workerId, executionId: s.executionId, ackDeadline });
        if (decision === 'wait') continue;
        await setExecutionState(conn, [s.executionId], 'ACK_TIMEOUT', 'ACK_TIMEOUT', { ended: true, onlyFrom: ['DISPATCHED'] });
        releases.push({ workerId: s.workerId, executionId: s.executionId });
        const base = { instanceId: s.instanceId, executionId: s.executionId, workerId: s.workerId };
        events.push({ ...base, type: 'ACK_TIMEOUT', message: `shard ${s.shardIndex + 1} of ${s.shardTotal}: no ACK from ${s.workerId} by the deadline`, data: { shardIndex: s.shardIndex } });
        const timeouts = await countShardAckTimeouts(conn, s);
        const next = { ...s, executionId: uuidv7() };
        const worker = timeouts <= ctx.config.maxReroutes ? await pick(next, null, [s.workerId]) : null;
        if (worker === null) {
          ctx.metrics.ackTimeouts.inc({ outcome: 'failed' });
          await fail(s, 'ACK_TIMEOUT', `shard ${s.shardIndex + 1} of ${s.shardTotal}: no worker ACKed it (${timeouts} ACK timeouts, no other eligible worker or re-routes exhausted)`);
          continue;
        }
        reserved.push({ workerId: worker.id, executionId: next.executionId });
        await insertShardExecution(conn, { ...next, workerId: worker.id, state: 'DISPATCHED', delayMs: 0 });
        events.push(
          { ...base, type: 'REROUTED', message: `shard ${s.shardIndex + 1} re-routed alone to ${worker.id} (${timeouts} of ${ctx.config.maxReroutes})`, data: { shardIndex: s.shardIndex } },
          { instanceId: s.instanceId, type: 'DISPATCHED', executionId: next.executionId, workerId: worker.id, message: `shard ${s.shardIndex + 1} of ${s.shardTotal} (re-route)`, data: { attempt: s.attempt, shardIndex: s.shardIndex, shardTotal: s.shardTotal } },
        );
        plan(next, worker, next.executionId, s.attempt);
        ctx.metrics.ackTimeouts.inc({ outcome: 'rerouted' });
        counts.rerouted++;
      }

      const listed = new Map<string, Set<string> | null>();
      for (const s of running) {
        if (failedInstances.has(s.instanceId)) continue;
        let ids = listed.get(s.workerId);
        if (ids === undefined) {
          const entry = await readRegistration(ctx.redis, ctx.keys, s.workerId);
          ids = entry === null ? null : new Set(entry.runningExecutionIds);
          listed.set(s.workerId, ids);
        }
        if (ids !== null && ids.has(s.executionId)) continue; // the lease is alive (R14)
        await setExecutionState(conn, [s.executionId], 'LOST_WORKER', 'LOST_WORKER', { ended: true, onlyFrom: ['RUNNING'] });
        releases.push({ workerId: s.workerId, executionId: s.executionId });
        const base = { instanceId: s.instanceId, executionId: s.executionId, workerId: s.workerId };
        events.push({ ...base, type: 'LOST_WORKER', message: `shard ${s.shardIndex + 1} of ${s.shardTotal}: worker ${s.workerId} no longer lists it`, data: { shardIndex: s.shardIndex, attempt: s.attempt } });
        ctx.metrics.lostWorkers.inc();
        counts.lost++;
        if (s.attempt >= s.maxAttempts) {
          await fail(s, 'LOST_WORKER', `shard ${s.shardIndex + 1} of ${s.shardTotal} lost its worker ${s.workerId} on its last attempt`);
          continue;
        }
        // The retry of this shard alone; the retry timer moves it to another worker when this one left.
        await insertShardExecution(conn, { ...s, executionId: uuidv7(), attempt: s.attempt + 1, state: 'RETRY_WAIT', delayMs: 0 });
        events.push({ ...base, type: 'RETRY_SCHEDULED', message: `shard ${s.shardIndex + 1} alone re-dispatched`, data: { shardIndex: s.shardIndex, nextAttempt: s.attempt + 1 } });
        ctx.metrics.retries.inc({ cause: 'LOST_WORKER' });
      }
      await appendEvents(conn, events);
    });
  } catch (error) {
    await bestEffort(ctx.logger, 'slots of a failed shard pass', [() => releaseAll(ctx.reservations, reserved)]);
    throw error;
  }
  // Nothing here may stop the publish of what is committed (best-effort.ts).
  const kept = new Set(toPublish.map((p) => p.executionId));
  await bestEffort(ctx.logger, 'slots of committed shard dispatches', [
    () => releaseAll(ctx.reservations, releases),
    () => releaseAll(ctx.reservations, reserved.filter((r) => !kept.has(r.executionId))),
  ]);
  for (const c of cancels) {
    try {
      await ctx.reservations.release(c.workerId, [c.executionId]);
      await requestCancel(ctx.bus, { workerId: c.workerId, executionIds: [c.executionId], reason: 'SHARD_FAILED' });
    } catch (error) {
      ctx.logger.warn({ err: toError(error), executionId: c.executionId }, 'cancel not sent');
    }
  }
  await publishPlanned(ctx, toPublish);
  if (finishedTasks.size > 0) ctx.notifyFinished([...finishedTasks], [...finishedDates]);
  return counts;
}


/**
 * Timed transitions (R6, R7), scanned by every broker on the database clock with conditional
 * UPDATEs: RETRY_WAIT → PENDING; ACK expiry (R8: `ack_deadline + 3 s`) → re-route excluding the
 * silent worker, capped, then FAILED/ACK_TIMEOUT; lease expiry (R14) → extend while the
 * worker's registry entry lists the execution, else LOST_WORKER; and the attempt deadline of
 * async executions (R15); alerts found on the same clock: LONG_RUNNING and SLA_MISSED (a task's
 * `sla`). ACK and lease expiry are suspended while this broker's own AMQP or
 * MySQL link is down and for one lease period after it returns (R14).
 */
import { toError } from '@ax/kit';
import { readRegistration, readRegistry, type WorkerRegistration } from '@ax/redis';
import {
  NOW,
  ackExpiredWorkerIds,
  anyUnfinished,
  appendEvents,
  extendLease,
  raiseAlert,
  scanAckExpired,
  scanLeaseExpired,
  scanLongRunning,
  scanRetryDue,
  scanDispatchedExecutions,
  scanRunningOfWorkers,
  scanSlaMissed,
  nextRetryDueInMs,
  nextAckExpiryInMs,
  setExecutionState,
  transitionInstance,

  type NewEvent,
  type Queryable,
  type TimedInstance,
} from '@ax/store';
import { failAttempt } from './attempts.js';
import { runShardTimers } from './broadcast.js';
import type { BrokerContext } from './context.js';
import { pauseOnFinalFailure } from './pause-on-failures.js';
import { decideExpiredDispatchOf, takeQueuedDispatches, type WorkerReadings } from './gone-dispatches.js';
import { bestEffort } from './best-effort.js';
import { recallHeld } from './recalls.js';
import { wakeDelayMs } from './wakeups.js';
import { inTransaction } from './transaction.js';

/** Rows handled per scan and transaction. */
const SCAN_LIMIT = 200;

/** What one pass did. */
export interface TimersOutcome {
  readonly retriesDue: number;
  readonly ackRerouted: number;
  readonly ackFailed: number;
  readonly leasesExtended: number;
  readonly lost: number;
  readonly asyncTimedOut: number;
  readonly suspended: boolean;
}

/** What a pass that found nothing unfinished did. */
const IDLE_PASS: TimersOutcome = { retriesDue: 0, ackRerouted: 0, ackFailed: 0, leasesExtended: 0, lost: 0, asyncTimedOut: 0, suspended: false };

/** One pass over every timed transition. */
export async function runTimersOnce(ctx: BrokerContext): Promise<TimersOutcome> {
  const suspended = ctx.links.expirySuspended;
  ctx.metrics.timersSuspended.set(suspended ? 1 : 0);
  // Nothing unfinished anywhere (an idle stack, #24): every scan below would find nothing, so one
  // plain read instead of four transactions and seven scans a second. Worker presence is still
  // observed every pass: it steers routing and needs its history (worker-presence.ts).
  if (!(await anyUnfinished(ctx.pool))) {
    if (suspended) ctx.presence.reset();
    else await goneWorkers(ctx);
    ctx.links.setMysql(true);
    return { ...IDLE_PASS, suspended };
  }
  const retriesDue = await runRetriesOnce(ctx);
  let ack = { rerouted: 0, failed: 0 };
  let lease = { extended: 0, lost: 0, asyncTimedOut: 0 };
  let workers: WorkerReadings = { gone: new Set(), entries: null };
  if (!suspended) {
    const { gone, registered, entries } = await goneWorkers(ctx);
    workers = { gone, entries };
    const takenBack = await rerouteTakenBack(ctx, registered, await unregisteredWithExpired(ctx, entries));
    ack = await ackExpiry(ctx, workers);
    ack = { ...ack, rerouted: ack.rerouted + takenBack };
    lease = await leaseExpiry(ctx, gone);
    await bestEffort(ctx.logger, 'recall of held dispatches', [async () => void (await recallHeld(ctx))]);
  } else {
    ctx.presence.reset(); // what was seen before this broker's own link broke proves nothing
  }
  await runShardTimers(ctx, !suspended, workers);
  await longRunning(ctx);
  await slaMissed(ctx);
  if (!suspended) {
    // #22: the re-route happens when the deadline expires, not at the next poll (wakeups.ts).
    const next = await nextAckExpiryInMs(ctx.pool, ctx.config.ackGraceMs, ctx.config.timersPollMs);
    if (next !== null) ctx.wakeTimersIn(wakeDelayMs(next));
  }
  ctx.links.setMysql(true);
  return { retriesDue, ackRerouted: ack.rerouted, ackFailed: ack.failed, leasesExtended: lease.extended, lost: lease.lost, asyncTimedOut: lease.asyncTimedOut, suspended };
}

/**
 * RETRY_WAIT → PENDING for what is due, then the wake for the next retry due within a poll
 * period (wakeups.ts): run by the timers pass and, at the moment a retry falls due, alone.
 */
export async function runRetriesOnce(ctx: BrokerContext): Promise<number> {
  const moved = await retryDue(ctx);
  const next = await nextRetryDueInMs(ctx.pool, ctx.config.timersPollMs);
  if (next !== null) ctx.wakeRetriesIn(wakeDelayMs(next));
  return moved;
}

async function retryDue(ctx: BrokerContext): Promise<number> {
  const moved = await inTransaction(ctx, async (conn) => {
    const due = await scanRetryDue(conn, SCAN_LIMIT);
    const events: NewEvent[] = [];
    for (const inst of due) {
      if (await transitionInstance(conn, { id: inst.id, from: 'RETRY_WAIT', to: 'PENDING', set: { worker_id: null } })) {
        events.push({ instanceId: inst.id, type: 'RETRY_DUE', data: { attempt: inst.attempt } });
      }
    }
    await appendEvents(conn, events);
    return events.length;
  });
  if (moved > 0) ctx.wakeDispatch();
  return moved;
}

/** The deadline an ACK_TIMEOUT event is about (the event's `at` minus it, less the grace, is how late it was found). */
function ackDeadlineData(inst: TimedInstance): { ackDeadline?: string } {
  return inst.ackDeadline === null ? {} : { ackDeadline: inst.ackDeadline.toISOString() };
}

/** DISPATCHED → PENDING for another worker, fenced by the execution (R8: not an attempt). */
function reroute(conn: Queryable, instanceId: string, executionId: string): Promise<boolean> {
  return transitionInstance(conn, {
    id: instanceId,
    from: 'DISPATCHED',
    to: 'PENDING',
    fenceExecutionId: executionId,
    set: { reroute_count: { expr: 'reroute_count + 1' }, ack_deadline: null },
  });
}

/** Registry entries read this pass by worker id; null when the registry could not be read. */
type Entries = WorkerReadings['entries'];

async function ackExpiry(ctx: BrokerContext, workers: WorkerReadings): Promise<{ rerouted: number; failed: number }> {
  const { gone } = workers;
  const releases: Array<{ workerId: string; executionId: string }> = [];
  const result = await inTransaction(ctx, async (conn) => {
    const expired = await scanAckExpired(conn, ctx.config.ackGraceMs, SCAN_LIMIT);
    const events: NewEvent[] = [];
    let rerouted = 0;
    let failed = 0;
    for (const inst of expired) {
      if (inst.executionId === null) continue;
      const base = { instanceId: inst.id, executionId: inst.executionId, workerId: inst.workerId };
      const decision =
        inst.workerId === null
          ? 'reroute'
          : decideExpiredDispatchOf(ctx, workers, { workerId: inst.workerId, executionId: inst.executionId, ackDeadline: inst.ackDeadline });
      if (decision === 'wait') continue; // the worker may hold it (gone-dispatches.ts)
      if (decision === 'lost') {
        // #23: it took the dispatch (no longer in its queue) and may have started it.
        const retry = await retryPolicyOf(conn, inst.taskId);
        await setExecutionState(conn, [inst.executionId], 'LOST', 'LOST_WORKER', { ended: true, onlyFrom: ['DISPATCHED'] });
        const capped = inst.lostCount >= ctx.config.maxLostRedispatches;
        const r = await failAttempt(
          ctx,
          conn,
          { instanceId: inst.id, taskName: inst.taskName, state: 'DISPATCHED', executionId: inst.executionId, workerId: inst.workerId, attempt: inst.attempt, maxAttempts: capped ? inst.attempt : inst.maxAttempts, retry },
          {
            reason: 'LOST_WORKER',
            eventType: 'LOST_WORKER',
            message: gone.has(inst.workerId ?? '')
              ? `worker ${inst.workerId ?? '?'} lost after it took the dispatch, before its ACK left: counted as started`
              : `worker ${inst.workerId ?? '?'} took the dispatch, sent no ACK and its lease ran out: counted as started`,
            redispatch: !capped && inst.attempt >= inst.maxAttempts,
          },
          events,
        );
        if (r !== 'lost') {
          await conn.query('UPDATE task_instance SET lost_count = lost_count + 1 WHERE id = ?', [inst.id]);
          ctx.metrics.lostWorkers.inc();
        }
        if (r === 'final') failed++;
        if (inst.workerId !== null) releases.push({ workerId: inst.workerId, executionId: inst.executionId });
        continue;
      }
      if (inst.rerouteCount < ctx.config.maxReroutes) {
        // Re-route: the silent worker (kept in worker_id) is excluded by the next claim.
        if (!(await reroute(conn, inst.id, inst.executionId))) continue;
        events.push(
          { ...base, type: 'ACK_TIMEOUT', message: `no ACK from ${inst.workerId ?? '?'} by the deadline`, data: ackDeadlineData(inst) },
          { ...base, type: 'REROUTED', message: `re-route ${inst.rerouteCount + 1} of ${ctx.config.maxReroutes}` },
        );
        ctx.metrics.ackTimeouts.inc({ outcome: 'rerouted' });
        rerouted++;
      } else {
        const won = await transitionInstance(conn, {
          id: inst.id,
          from: 'DISPATCHED',
          to: 'FAILED',
          fenceExecutionId: inst.executionId,
          set: { reason: 'ACK_TIMEOUT', ended_at: NOW, ack_deadline: null },
        });
        if (!won) continue;
        events.push({ ...base, type: 'ACK_TIMEOUT', message: `no ACK after ${ctx.config.maxReroutes} re-routes; failed`, data: { reason: 'ACK_TIMEOUT', final: true, ...ackDeadlineData(inst) } });
        await raiseAlert(conn, {
          kind: 'FINAL_FAILURE',
          severity: 'critical',
          instanceId: inst.id,
          taskName: inst.taskName,
          workerId: inst.workerId,
          message: `${inst.taskName} instance ${inst.id} failed: no worker ACKed it after ${ctx.config.maxReroutes} re-routes (ACK_TIMEOUT)`,
        });
        await pauseOnFinalFailure(ctx, conn, inst.id);
        ctx.metrics.ackTimeouts.inc({ outcome: 'failed' });
        failed++;
      }
      await setExecutionState(conn, [inst.executionId], 'ACK_TIMEOUT', 'ACK_TIMEOUT', { ended: true, onlyFrom: ['DISPATCHED'] });
      if (inst.workerId !== null) releases.push({ workerId: inst.workerId, executionId: inst.executionId });
    }
    await appendEvents(conn, events);
    return { rerouted, failed, tasks: expired };
  });
  await release(ctx, releases);
  if (result.failed > 0) notifyFinished(ctx, result.tasks);
  if (result.rerouted > 0) ctx.wakeDispatch();
  return { rerouted: result.rerouted, failed: result.failed };
}

/**
 * Workers known gone by the fast signal (worker-presence.ts): their control queue has no
 * consumer and their registry entry stopped changing. Read fresh (not the routing cache) for
 * every registered worker — not only those whose entry lists executions: a worker killed before
 * its next heartbeat listed a job it had just started holds it all the same. Gone workers get no
 * new dispatches. An unclear reading decides nothing.
 */
async function goneWorkers(ctx: BrokerContext): Promise<{ gone: Set<string>; registered: string[]; entries: Entries }> {
  let registered: WorkerRegistration[];
  try {
    registered = await readRegistry(ctx.redis, ctx.keys);
  } catch (error) {
    ctx.logger.warn({ err: toError(error) }, 'worker registry not read; lost workers wait for their lease');
    return { gone: new Set(), registered: [], entries: null };
  }
  const entries = new Map(registered.map((w) => [w.workerId, w]));
  try {
    const queues = registered.map((w) => ctx.bus.topology.controlQueue(w.workerId));
    const consumers = registered.length === 0 ? new Map<string, number | null>() : await ctx.bus.consumerCounts(queues);
    const readings = new Map(registered.map((w, i) => [w.workerId, { consumers: consumers.get(queues[i] ?? '') ?? null, heartbeatAt: w.at }]));
    const gone = ctx.presence.observe(performance.now(), readings);
    for (const workerId of gone) ctx.workers.markUnroutable(workerId, ctx.config.leaseTtlMs);
    return { gone, registered: registered.map((w) => w.workerId), entries };
  } catch (error) {
    ctx.logger.warn({ err: toError(error) }, 'worker presence not read; lost workers wait for their lease');
    return { gone: new Set(), registered: [], entries };
  }
}

/**
 * Workers without a registry entry that expired dispatches went to: their queues are read too
 * (a dispatch still there never reached the worker; without this it would count as lost).
 */
async function unregisteredWithExpired(ctx: BrokerContext, entries: Entries): Promise<string[]> {
  if (entries === null) return [];
  try {
    return (await ackExpiredWorkerIds(ctx.pool, ctx.config.ackGraceMs)).filter((id) => !entries.has(id));
  } catch (error) {
    ctx.logger.warn({ err: toError(error) }, 'workers of expired dispatches not read');
    return [];
  }
}

/**
 * Dispatches still in the queue of a worker without a consumer or registry entry never reached
 * it: taken out and re-routed at once, no attempt spent (gone-dispatches.ts). Returns how many
 * were re-routed.
 */
async function rerouteTakenBack(ctx: BrokerContext, workerIds: readonly string[], unregistered: readonly string[]): Promise<number> {
  let taken: Set<string>;
  try {
    taken = await takeQueuedDispatches(ctx, workerIds, unregistered);
  } catch (error) {
    ctx.logger.warn({ err: toError(error) }, 'queues of workers without a consumer not read; their dispatches wait for the ACK deadline');
    return 0;
  }
  if (taken.size === 0) return 0;
  const releases: Array<{ workerId: string; executionId: string }> = [];
  const rerouted = await inTransaction(ctx, async (conn) => {
    const events: NewEvent[] = [];
    for (const inst of await scanDispatchedExecutions(conn, [...taken], SCAN_LIMIT)) {
      if (inst.executionId === null) continue;
      if (!(await reroute(conn, inst.id, inst.executionId))) continue;
      await setExecutionState(conn, [inst.executionId], 'ACK_TIMEOUT', 'ACK_TIMEOUT', { ended: true, onlyFrom: ['DISPATCHED'] });
      events.push({
        instanceId: inst.id,
        executionId: inst.executionId,
        workerId: inst.workerId,
        type: 'REROUTED',
        message: `worker ${inst.workerId ?? '?'} had not taken the dispatch when it lost its consumer or left (taken back from its queue)`,
      });
      if (inst.workerId !== null) releases.push({ workerId: inst.workerId, executionId: inst.executionId });
    }
    await appendEvents(conn, events);
    return events.length;
  });
  await release(ctx, releases);
  if (rerouted > 0) ctx.wakeDispatch();
  return rerouted;
}

async function leaseExpiry(ctx: BrokerContext, gone: ReadonlySet<string>): Promise<{ extended: number; lost: number; asyncTimedOut: number }> {
  const releases: Array<{ workerId: string; executionId: string }> = [];
  const extensions: Array<{ workerId: string; executionId: string }> = [];
  const finishedRows: TimedInstance[] = [];
  const out = await inTransaction(ctx, async (conn) => {
    const expired = await scanLeaseExpired(conn, ctx.config.lostWorkerGraceMs, SCAN_LIMIT);
    const seen = new Set(expired.map((inst) => inst.id));
    for (const inst of await scanRunningOfWorkers(conn, [...gone], SCAN_LIMIT)) if (!seen.has(inst.id)) expired.push(inst);
    const events: NewEvent[] = [];
    let extended = 0;
    let lost = 0;
    let asyncTimedOut = 0;
    const registrations = new Map<string, { listed: Set<string>; ttlMs: number } | null>();
    for (const inst of expired) {
      if (inst.executionId === null) continue;
      const retry = await retryPolicyOf(conn, inst.taskId);
      const failing = {
        instanceId: inst.id,
        taskName: inst.taskName,
        state: 'RUNNING' as const,
        executionId: inst.executionId,
        workerId: inst.workerId,
        attempt: inst.attempt,
        maxAttempts: inst.maxAttempts,
        retry,
      };
      if (inst.executionState === 'ASYNC') {
        // R15: the attempt deadline of an accepted-async execution is enforced here.
        await setExecutionState(conn, [inst.executionId], 'TIMED_OUT', 'TIMEOUT', { ended: true });
        const r = await failAttempt(ctx, conn, failing, { reason: 'TIMEOUT', eventType: 'TIMED_OUT', message: 'no async report before the attempt deadline' }, events);
        if (r === 'final') finishedRows.push(inst);
        asyncTimedOut++;
        continue;
      }
      const isGone = inst.workerId !== null && gone.has(inst.workerId);
      let registration = isGone ? null : registrations.get(inst.workerId ?? '');
      if (registration === undefined) {
        registration = inst.workerId === null ? null : await registrationOf(ctx, inst.workerId);
        registrations.set(inst.workerId ?? '', registration);
      }
      const listed = registration?.listed ?? null;
      if (registration !== null && listed !== null && listed.has(inst.executionId)) {
        // R14: the worker still lists it: the lease holds — until its registry entry expires,
        // not a full lease period from now. A worker that dies right after a heartbeat is then
        // examined again one grace after its entry is gone (≤ lease + grace, ~25 s by default),
        // not after a second full lease (the drills measured 32–40 s that way).
        if (await extendLease(conn, inst.id, inst.executionId, registration.ttlMs)) {
          extended++;
          if (inst.workerId !== null) extensions.push({ workerId: inst.workerId, executionId: inst.executionId });
        }
        continue;
      }
      const why = isGone
        ? 'its AMQP connection closed and its heartbeats stopped'
        : listed === null
          ? 'its registry entry is gone'
          : 'its registry entry no longer lists the execution';
      await setExecutionState(conn, [inst.executionId], 'LOST', 'LOST_WORKER', { ended: true });
      // A failed attempt; automatic re-dispatches after lost workers are capped (then final).
      const capped = inst.lostCount >= ctx.config.maxLostRedispatches;
      const r = await failAttempt(
        ctx,
        conn,
        { ...failing, maxAttempts: capped ? inst.attempt : inst.maxAttempts },
        { reason: 'LOST_WORKER', eventType: 'LOST_WORKER', message: `worker ${inst.workerId ?? '?'} lost: ${why}`, redispatch: !capped && inst.attempt >= inst.maxAttempts },
        events,
      );
      if (r !== 'lost') {
        await conn.query('UPDATE task_instance SET lost_count = lost_count + 1 WHERE id = ?', [inst.id]);
        lost++;
        ctx.metrics.lostWorkers.inc();
        await raiseAlert(conn, {
          kind: 'LOST_WORKER',
          severity: 'critical',
          subject: `worker:${inst.workerId ?? '?'}:${new Date().toISOString().slice(0, 13)}`,
          workerId: inst.workerId,
          instanceId: inst.id,
          taskName: inst.taskName,
          message: `worker ${inst.workerId ?? '?'} was declared lost while running ${inst.taskName} instance ${inst.id} (${why})`,
        });
      }
      if (r === 'final') finishedRows.push(inst);
      if (inst.workerId !== null) releases.push({ workerId: inst.workerId, executionId: inst.executionId });
    }
    await appendEvents(conn, events);
    return { extended, lost, asyncTimedOut };
  });
  await release(ctx, releases);
  // Written again, not only extended: the registry lists them, so a reservation Redis lost comes back (R9).
  await Promise.all(extensions.map((e) => ctx.reservations.restore(e.workerId, [e.executionId], ctx.config.leaseTtlMs * 2)));
  if (finishedRows.length > 0) notifyFinished(ctx, finishedRows);
  if (out.lost + out.asyncTimedOut > 0) ctx.wakeDispatch();
  return out;
}

/**
 * LONG_RUNNING: an attempt past 80 % of its timeout gets one alert and one event (DESIGN §7).
 * A dispatch its worker still holds (R9 prefetch: ACKed, so RUNNING since its ACK, but waiting
 * for a slot) has not started: it is left for a later pass, once it runs or is recalled.
 */
async function longRunning(ctx: BrokerContext): Promise<void> {
  const runs = await scanLongRunning(ctx.pool, 0.8, SCAN_LIMIT);
  if (runs.length === 0) return;
  const held = new Set((await ctx.workers.registry()).flatMap((w) => (w.held ?? []).map((h) => h.executionId)));
  for (const run of runs) {
    if (run.executionId !== null && held.has(run.executionId)) continue;
    const raised = await raiseAlert(ctx.pool, {
      kind: 'LONG_RUNNING',
      severity: 'warning',
      instanceId: run.id,
      taskName: run.taskName,
      workerId: run.workerId,
      message: `${run.taskName} instance ${run.id} has run past 80 % of its ${run.timeoutSeconds} s timeout on ${run.workerId ?? '?'}`,
    });
    if (raised) {
      await appendEvents(ctx.pool, [
        { instanceId: run.id, type: 'LONG_RUNNING', executionId: run.executionId, workerId: run.workerId, message: `past 80 % of ${run.timeoutSeconds} s` },
      ]);
    }
  }
}

/**
 * SLA_MISSED: an instance not started / not finished `sla.*WithinSeconds` after its slot gets
 * one warning and one event (the unique alert key makes it once per instance, whichever broker
 * finds it; the event follows the alert that won).
 */
async function slaMissed(ctx: BrokerContext): Promise<void> {
  for (const miss of await scanSlaMissed(ctx.pool, SCAN_LIMIT)) {
    const what = miss.miss === 'START' ? 'started' : 'finished';
    const message = `${miss.taskName} instance ${miss.id} had not ${what} ${miss.withinSeconds} s after its slot ${miss.expectedTime.toISOString()} (sla.${miss.miss === 'START' ? 'startWithinSeconds' : 'finishWithinSeconds'})`;
    const raised = await raiseAlert(ctx.pool, {
      kind: 'SLA_MISSED',
      severity: 'warning',
      instanceId: miss.id,
      taskName: miss.taskName,
      reason: miss.miss,
      message,
    });
    if (raised) {
      ctx.metrics.slaMissed.inc({ miss: miss.miss });
      await appendEvents(ctx.pool, [{ instanceId: miss.id, type: 'SLA_MISSED', message, data: { reason: miss.miss, withinSeconds: miss.withinSeconds } }]);
    }
  }
}

async function retryPolicyOf(
  conn: Parameters<typeof scanRetryDue>[0],
  taskId: string,
): Promise<{ backoffSeconds: number; factor: number; jitterSeconds: number } | null> {
  const [rows] = await conn.query(`SELECT retry FROM task WHERE id = ?`, [taskId]);
  const row = (rows as Array<{ retry: unknown }>)[0];
  if (row === undefined) return null;
  try {
    const value = (typeof row.retry === 'string' ? JSON.parse(row.retry) : row.retry) as Record<string, unknown>;
    return { backoffSeconds: Number(value.backoffSeconds ?? 30), factor: Number(value.factor ?? 2), jitterSeconds: Number(value.jitterSeconds ?? 10) };
  } catch (_corrupt) {
    return null;
  }
}

/** A worker's registry entry: the executions it lists and how long the entry lives (PTTL). */
async function registrationOf(ctx: BrokerContext, workerId: string): Promise<{ listed: Set<string>; ttlMs: number } | null> {
  const [entry, pttlMs] = await Promise.all([readRegistration(ctx.redis, ctx.keys, workerId), ctx.redis.pttl(ctx.keys.worker(workerId))]);
  if (entry === null) return null;
  // No TTL (-1) or a race with its expiry (-2): fall back to one lease period / a short wait.
  const ttlMs = pttlMs === -1 ? ctx.config.leaseTtlMs : Math.max(1_000, Math.min(pttlMs, ctx.config.leaseTtlMs));
  return { listed: new Set(entry.runningExecutionIds), ttlMs };
}

async function release(ctx: BrokerContext, releases: ReadonlyArray<{ workerId: string; executionId: string }>): Promise<void> {
  try {
    await Promise.all(releases.map((r) => ctx.reservations.release(r.workerId, [r.executionId])));
  } catch (error) {
    // Reservations expire by themselves (R9).
    ctx.logger.warn({ err: toError(error) }, 'reservation release failed');
  }
}

function notifyFinished(ctx: BrokerContext, rows: readonly TimedInstance[]): void {
  ctx.notifyFinished([...new Set(rows.map((r) => r.taskName))], [...new Set(rows.map((r) => r.bizDate))]);
}

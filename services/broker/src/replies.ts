/**
 * The events consumer (DESIGN §4, R15–R17): ACKs, refusals and results from workers (and async
 * reports relayed by admin-api) on `<ns>.events`, consumed by every broker. Each message is
 * applied in one transaction (R10: batched items), fenced by `current_execution_id`, and
 * idempotent by `execution_id`. An item whose sender (validated RabbitMQ user) may not speak for
 * its execution's worker is dropped alone (R24, attribution.ts). A message that cannot be read (its envelope) is dead-lettered
 * and counted; a bad item inside a readable message is refused alone (#45, refused-items.ts)
 * and the rest of the message is applied as usual.
 */
import { parseMessageByItem, type AckMessage, type RefusalMessage, type RefusedItem, type ResultItem, type ResultMessage } from '@ax/core';
import { requestCancel, type BusMessage, type ConsumeOutcome } from '@ax/bus';
import { isRetryableError, toError, type Metrics } from '@ax/kit';
import {
  NOW,
  appendEvents,
  extendLease,
  insertShardExecution,
  lockExecutions,
  markExecutionAcked,
  markExecutionsAcked,
  nowPlusMs,
  raiseAlert,
  recordExecutionOutcome,
  recordExecutionOutcomes,
  setExecutionState,
  transitionInstance,
  transitionInstances,
  type ExecutionOutcome,
  type ExecutionWithInstance,
  type Queryable,
  type NewEvent,
} from '@ax/store';
import { failAttempt } from './attempts.js';
import { applyShardAck, applyShardResult } from './broadcast.js';
import type { BrokerContext } from './context.js';
import { inTransaction } from './transaction.js';
import { EventBatcher } from './event-batch.js';
import { attributed } from './attribution.js';
import { idsByWorker } from './reservations.js';
import { isLockConflict } from './lock-conflict.js';
import { uuidv7 } from './uuidv7.js';
import { failureOf } from './result-failure.js';
import { logMetricsOf } from './log-chunks.js';
import { encodeResultOutputs, ResultOutputRows } from './result-output.js';
import { failedResultOf, reportRefusedItems } from './refused-items.js';

interface Effects {
  releases: Array<{ workerId: string; executionId: string }>;
  extends: Array<{ workerId: string; executionId: string; ttlMs: number }>;
  cancels: Array<{ workerId: string; executionId: string; reason: string }>;
  finishedTasks: Set<string>;
  finishedDates: Set<string>;
  /** Workers that refused with CLOCK_SKEW or SHUTTING_DOWN: kept out of this broker's routing for a while. */
  unroutable: Set<string>;
  wake: boolean;
}

function newEffects(): Effects {
  return { releases: [], extends: [], cancels: [], finishedTasks: new Set(), finishedDates: new Set(), unroutable: new Set(), wake: false };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The handler of `<ns>.events`. `metrics`: where the job output that results carry is counted. */
export function createEventsHandler(ctx: BrokerContext, metrics?: Metrics): (message: BusMessage) => Promise<ConsumeOutcome> {
  const logSeries = metrics === undefined ? undefined : logMetricsOf(metrics);
  // Messages that arrive together are applied together: one transaction per kind (R10).
  const batcher = new EventBatcher(async (messages) => {
    const effects = newEffects();
    // The output results carry is compressed before the transaction and written once at its end.
    const encoded = await encodeResultOutputs(messages);
    await inTransaction(ctx, async (conn) => {
      const output = new ResultOutputRows(encoded, logSeries);
      // Several messages: every instance of the batch locked first, in id order, so two
      // brokers applying overlapping batches wait for each other instead of deadlocking. The
      // rows read then serve every message that touches no instance an earlier message of the
      // batch changed; such a message re-reads its own, fresh, under the locks already held.
      const all: ReadonlyArray<{ executionId: string; instanceId: string }> = messages.flatMap((m) => m.items.map(({ executionId, instanceId }) => ({ executionId, instanceId })));
      const locked = messages.length > 1 ? await lockExecutions(conn, all.map((i) => i.executionId), all.map((i) => i.instanceId)) : undefined;
      const touched = new Set<string>();
      for (const m of messages) {
        const items: ReadonlyArray<{ executionId: string; instanceId: string }> = m.items;
        const ownRows = locked !== undefined && items.every((i) => !touched.has(locked.get(i.executionId)?.instanceId ?? i.instanceId));
        const rows = ownRows ? locked : undefined;
        if (m.kind === 'ack') await applyAcks(ctx, conn, m, m.sender, effects, rows);
        else if (m.kind === 'refusal') await applyRefusals(ctx, conn, m, m.sender, effects, rows);
        else await applyResults(ctx, conn, m, m.sender, effects, rows, output);
        for (const i of items) touched.add(locked?.get(i.executionId)?.instanceId ?? i.instanceId);
      }
      await output.write(conn);
    });
    ctx.links.setMysql(true);
    await runEffects(ctx, effects);
  });
  return async (raw) => {
    const parsed = parseMessageByItem(raw.body);
    if (!parsed.ok) {
      ctx.metrics.invalidMessages.inc({ kind: 'invalid' });
      ctx.logger.warn({ reason: parsed.reason }, 'invalid event message dead-lettered');
      return { action: 'dead-letter', reason: parsed.reason };
    }
    let message = parsed.message;
    switch (message.kind) {
      case 'heartbeat':
        // The Redis registry is the lease (R14); heartbeats on the bus are informational. One
        // not sent by the enrollment of the worker it names is counted and logged (R24).
        attributed(ctx, ctx.logger, { kind: 'heartbeat', sender: raw.userId, workerId: message.workerId });
        return 'ack';
      case 'dispatch':
      case 'cancel':
      case 'log':
        ctx.metrics.invalidMessages.inc({ kind: message.kind });
        return { action: 'dead-letter', reason: `a ${message.kind} message does not belong on the events queue` };
      default:
        break;
    }
    if (parsed.refused.length > 0) {
      reportRefusedItems(ctx.metrics, ctx.logger, message.kind, message.workerId, parsed.refused);
      if (message.kind === 'result') message = withRefusedResultsFailed(message, parsed.refused);
      if (message.items.length === 0) return 'ack'; // every item refused: nothing to apply
    }
    try {
      // The sender travels with the message: its items are attributed once their executions are read.
      await batcher.submit({ ...message, sender: raw.userId });
      return 'ack';
    } catch (thrown) {
      const error = toError(thrown);
      if (isRetryableError(error)) {
        // MySQL (or Redis) is away or a deadlock: try again later, never lose a result. Only a
        // connection failure marks the link down (that suspends ACK and lease expiry, R14).
        const conflict = isLockConflict(error);
        if (!conflict) ctx.links.setMysql(false);
        ctx.logger.warn({ err: error, kind: message.kind }, 'event not applied yet; requeued');
        await sleep(conflict ? 50 : 1_000);
        return 'requeue';
      }
      throw error;
    }
  };
}

/** `message` with a FAILED result for each refused item that names its execution (refused-items.ts). */
function withRefusedResultsFailed(message: ResultMessage, refused: readonly RefusedItem[]): ResultMessage {
  const endedAt = new Date().toISOString();
  const answered = new Set(message.items.map((i) => i.executionId));
  const failed: ResultItem[] = [];
  for (const r of refused) {
    const item = failedResultOf(r, endedAt);
    // An execution that also has a good item in the message keeps that one.
    if (item === undefined || answered.has(item.executionId)) continue;
    answered.add(item.executionId);
    failed.push(item);
  }
  return failed.length === 0 ? message : { ...message, items: [...message.items, ...failed] };
}

async function runEffects(ctx: BrokerContext, effects: Effects): Promise<void> {
  await Promise.all([...idsByWorker(effects.releases)].map(([workerId, ids]) => ctx.reservations.release(workerId, ids)));
  // One call per (worker, ttl): a batch of ACKs extends its slots together.
  const extendGroups = new Map<string, { workerId: string; ttlMs: number; ids: string[] }>();
  for (const e of effects.extends) {
    const key = `${e.workerId}\u0000${e.ttlMs}`;
    const group = extendGroups.get(key) ?? { workerId: e.workerId, ttlMs: e.ttlMs, ids: [] };
    group.ids.push(e.executionId);
    extendGroups.set(key, group);
  }
  await Promise.all([...extendGroups.values()].map((g) => ctx.reservations.extend(g.workerId, g.ids, g.ttlMs)));
  await Promise.all(
    effects.cancels.map(async (c) => {
      try {
        await requestCancel(ctx.bus, { workerId: c.workerId, executionIds: [c.executionId], reason: c.reason });
      } catch (error) {
        ctx.logger.warn({ err: toError(error), executionId: c.executionId }, 'cancel not sent');
      }
    }),
  );
  // Its registry entry may still show free slots for up to a cache period: without this the
  // re-routed instances bounce back to it (the drills counted ~500 refusals in 1.5 s).
  for (const workerId of effects.unroutable) ctx.workers.markUnroutable(workerId, ctx.config.leaseTtlMs);
  if (effects.finishedTasks.size > 0) ctx.notifyFinished([...effects.finishedTasks], [...effects.finishedDates]);
  if (effects.wake || effects.releases.length > 0) ctx.wakeDispatch();
}

/** The executions replied to, their instances locked (the items' instance ids as hints). */
function lockRepliedTo(conn: Queryable, items: ReadonlyArray<{ executionId: string; instanceId: string }>): Promise<Map<string, ExecutionWithInstance>> {
  return lockExecutions(
    conn,
    items.map((i) => i.executionId),
    items.map((i) => i.instanceId),
  );
}

/** Items of one message, each execution once (a repeated item changes nothing twice). */
function uniqueItems<T extends { executionId: string }>(items: readonly T[]): T[] {
  return [...new Map(items.map((i) => [i.executionId, i])).values()];
}

async function applyAcks(
  ctx: BrokerContext,
  conn: Queryable,
  message: AckMessage,
  sender: string | undefined,
  effects: Effects,
  locked?: ReadonlyMap<string, ExecutionWithInstance>,
): Promise<void> {
  const rows = locked ?? (await lockRepliedTo(conn, message.items));
  const events: NewEvent[] = [];
  const acked: string[] = [];
  const toRunning = new Map<string, { r: ExecutionWithInstance; workerId: string }>();
  for (const item of uniqueItems(message.items)) {
    const r = rows.get(item.executionId);
    if (r === undefined) {
      ctx.logger.warn({ executionId: item.executionId, workerId: message.workerId }, 'ACK of an unknown execution ignored');
      continue;
    }
    if (!attributed(ctx, ctx.logger, { kind: 'ack', sender, workerId: r.executionWorkerId, executionId: item.executionId, claimedWorkerId: message.workerId })) continue;
    // The worker it was dispatched to, not the one the message names (R24): cancels, releases
    // and events go to it.
    const workerId = r.executionWorkerId;
    if (r.executionShardIndex !== null) {
      // R21: a broadcast shard is fenced by its own current execution.
      await applyShardAck(ctx, conn, workerId, r, events, effects);
      continue;
    }
    const base = { instanceId: r.instanceId, executionId: item.executionId, workerId };
    if (r.currentExecutionId !== item.executionId) {
      // R16/§4: the dispatch was re-routed; this worker must not run it to completion unnoticed.
      if (r.endedAt === null) await setExecutionState(conn, [item.executionId], 'SUPERSEDED', 'SUPERSEDED', { ended: true });
      events.push({ ...base, type: 'FENCED', message: 'ACK of a superseded execution; cancel sent' });
      effects.cancels.push({ workerId, executionId: item.executionId, reason: 'SUPERSEDED' });
      effects.releases.push({ workerId, executionId: item.executionId });
      ctx.metrics.fenced.inc({ kind: 'ack' });
      continue;
    }
    acked.push(item.executionId);
    if (r.state !== 'DISPATCHED') continue; // R16: an ACK for an instance past RUNNING is a no-op
    toRunning.set(r.instanceId, { r, workerId });
  }
  // R10: every ACK of the message in two statements; the rows are locked, the fence stays in
  // the WHERE all the same.
  await markExecutionsAcked(conn, acked);
  const won = await transitionInstances(conn, {
    ids: [...toRunning.keys()],
    from: 'DISPATCHED',
    to: 'RUNNING',
    fence: new Map([...toRunning].map(([id, t]) => [id, t.r.executionId])),
    set: { lease_until: nowPlusMs(ctx.config.leaseTtlMs), started_at: { expr: 'COALESCE(started_at, NOW(3))' }, ack_deadline: null },
  });
  for (const [instanceId, { r, workerId }] of toRunning) {
    if (!won.has(instanceId)) continue;
    events.push({ instanceId, executionId: r.executionId, workerId, type: 'ACKED' });
    ctx.metrics.ackLatency.observe(Math.max(0, r.sinceDispatchMs) / 1000);
    effects.extends.push({
      workerId,
      executionId: r.executionId,
      ttlMs: (r.timeoutSeconds ?? 3_600) * 1000 + ctx.config.leaseTtlMs + ctx.config.lostWorkerGraceMs,
    });
  }
  await appendEvents(conn, events);
}

async function applyRefusals(
  ctx: BrokerContext,
  conn: Queryable,
  message: RefusalMessage,
  sender: string | undefined,
  effects: Effects,
  locked?: ReadonlyMap<string, ExecutionWithInstance>,
): Promise<void> {
  const rows = locked ?? (await lockRepliedTo(conn, message.items));
  const events: NewEvent[] = [];
  for (const item of message.items) {
    const r = rows.get(item.executionId);
    if (r !== undefined && !attributed(ctx, ctx.logger, { kind: 'refusal', sender, workerId: r.executionWorkerId, executionId: item.executionId, claimedWorkerId: message.workerId })) continue;
    ctx.metrics.refusals.inc({ reason: item.reason });
    if (r === undefined) continue;
    // The worker it was dispatched to, not the one the message names (R24): releases, routing
    // marks, alerts and events go to it.
    const workerId = r.executionWorkerId;
    const base = { instanceId: r.instanceId, executionId: item.executionId, workerId };
    if (item.reason === 'DUPLICATE') {
      // A redelivered dispatch the worker's outbox already holds (R12): nothing changes.
      events.push({ ...base, type: 'REFUSED', message: 'duplicate delivery ignored by the worker', data: { reason: item.reason } });
      continue;
    }
    effects.releases.push({ workerId, executionId: item.executionId });
    if (item.reason === 'CLOCK_SKEW' || item.reason === 'SHUTTING_DOWN') effects.unroutable.add(workerId);
    if (item.reason === 'CLOCK_SKEW') {
      // §5/§7: the worker leaves the registry and alerts its webhook itself; the alert log
      // (admin API, console) hears it here, once per worker and hour.
      await raiseAlert(conn, {
        kind: 'CLOCK_SKEW',
        severity: 'warning',
        subject: `worker:${workerId}:${new Date().toISOString().slice(0, 13)}`,
        workerId,
        message: `worker ${workerId} refused work: its clock is skewed${item.detail === undefined ? '' : ` (${item.detail})`}`,
      });
    }
    if (r.endedAt === null) await setExecutionState(conn, [item.executionId], 'REFUSED', item.reason, { ended: true });
    const detail = item.detail === undefined ? '' : `: ${item.detail}`;
    events.push({ ...base, type: item.reason === 'CLOCK_SKEW' ? 'CLOCK_SKEW' : 'REFUSED', message: `refused ${item.reason}${detail}`, data: { reason: item.reason } });
    if (r.executionShardIndex !== null) {
      // R21: a refused shard waits as a retry of itself, due now, without counting an attempt.
      if (r.latestOfShard && r.executionRunNo === r.runNo && (r.state === 'DISPATCHED' || r.state === 'RUNNING')) {
        await insertShardExecution(conn, {
          executionId: uuidv7(),
          instanceId: r.instanceId,
          attempt: r.executionAttempt,
          runNo: r.runNo,
          shardIndex: r.executionShardIndex,
          shardTotal: r.executionShardTotal ?? r.shardTotal ?? 1,
          workerId,
          state: 'RETRY_WAIT',
          delayMs: 0,
        });
        events.push({ ...base, type: 'REROUTED', message: `shard ${r.executionShardIndex + 1} refused ${item.reason}; re-dispatched without counting an attempt` });
      }
      continue;
    }
    if (r.currentExecutionId !== item.executionId || (r.state !== 'DISPATCHED' && r.state !== 'RUNNING')) continue;
    // R16: a refusal is a transition — re-route without counting an attempt. From RUNNING too:
    // a worker whose ACK left may still find, at the job's start, that it must not run it (#23:
    // frozen past its lease, or the ACK too late); the job never started.
    const won = await transitionInstance(conn, {
      id: r.instanceId,
      from: ['DISPATCHED', 'RUNNING'],
      to: 'PENDING',
      fenceExecutionId: item.executionId,
      set: { ack_deadline: null },
    });
    if (won) {
      events.push({ ...base, type: 'REROUTED', message: `refused ${item.reason}; re-routed without counting an attempt` });
      effects.wake = true;
    }
  }
  await appendEvents(conn, events);
}

/** Execution states written from a result: a second result of the same execution is a duplicate. */
const RESULT_RECORDED: ReadonlySet<string> = new Set(['SUCCESS', 'FAILED', 'TIMED_OUT', 'CANCELED', 'WORKER_RESTART']);

const EXECUTION_STATE: Record<ResultItem['outcome'], string> = {
  SUCCESS: 'SUCCESS',
  FAILED: 'FAILED',
  TIMEOUT: 'TIMED_OUT',
  CANCELED: 'CANCELED',
  WORKER_RESTART: 'WORKER_RESTART',
};

async function applyResults(
  ctx: BrokerContext,
  conn: Queryable,
  message: ResultMessage,
  sender: string | undefined,
  effects: Effects,
  locked: ReadonlyMap<string, ExecutionWithInstance> | undefined,
  output: ResultOutputRows,
): Promise<void> {
  const rows = locked ?? (await lockRepliedTo(conn, message.items));
  const events: NewEvent[] = [];
  // R10: the common case — the current execution of an active instance succeeded — is
  // collected and written set-based; anything else is applied one by one, in order, after
  // what was collected before it.
  let successes: Array<{ item: ResultItem; r: ExecutionWithInstance }> = [];
  const flush = async (): Promise<void> => {
    if (successes.length === 0) return;
    const batch = successes;
    successes = [];
    await recordExecutionOutcomes(conn, batch.map(({ item }) => ({ executionId: item.executionId, outcome: { ...outcomeOf(item), state: 'SUCCESS', reason: null } })));
    const won = await transitionInstances(conn, {
      ids: batch.map(({ r }) => r.instanceId),
      from: ['DISPATCHED', 'RUNNING'],
      to: 'SUCCESS',
      fence: new Map(batch.map(({ r }) => [r.instanceId, r.executionId])),
      set: { reason: null, ended_at: NOW, ack_deadline: null, lease_until: null, started_at: { expr: 'COALESCE(started_at, NOW(3))' } },
    });
    for (const { r } of batch) {
      if (!won.has(r.instanceId)) continue;
      events.push({ instanceId: r.instanceId, executionId: r.executionId, workerId: r.executionWorkerId, type: 'SUCCEEDED' });
      finished(effects, r);
    }
  };
  // Output that comes with the result (`printedNothing`, `output`: result-output.ts) is kept
  // for every item, whatever the result does to the instance; the batch writes it at its end.
  for (const item of uniqueItems(message.items)) {
    const r = rows.get(item.executionId);
    if (r === undefined) {
      ctx.logger.warn({ executionId: item.executionId }, 'result of an unknown execution ignored');
      continue;
    }
    const kind = message.origin === 'report' ? 'report' : 'result';
    if (!attributed(ctx, ctx.logger, { kind, sender, workerId: r.executionWorkerId, executionId: item.executionId, claimedWorkerId: message.workerId })) continue;
    output.add(message, item, r.executionWorkerId);
    if (message.origin === 'report' && r.executionState !== 'ASYNC') {
      // A report is a result only for an execution that answered 202 (DESIGN §11). admin-api
      // refuses the others (409 NOT_ASYNC); this holds even for a report relayed another way.
      if (!RESULT_RECORDED.has(r.executionState)) {
        await flush();
        events.push({ instanceId: r.instanceId, executionId: item.executionId, workerId: r.executionWorkerId, type: 'FENCED', message: `report for an execution that did not answer 202 (${r.executionState}) recorded, not applied`, data: { outcome: item.outcome } });
        ctx.metrics.fenced.inc({ kind: 'result' });
      }
      continue;
    }
    if (isPlainSuccess(item, r)) {
      if (message.origin !== 'report') effects.releases.push({ workerId: r.executionWorkerId, executionId: item.executionId });
      ctx.metrics.results.inc({ outcome: item.outcome });
      successes.push({ item, r });
      continue;
    }
    await flush();
    await applyResult(ctx, conn, message, item, r, events, effects);
  }
  await flush();
  await appendEvents(conn, events);
}

/** A SUCCESS of the current execution of a DISPATCHED/RUNNING, non-broadcast instance, not yet recorded. */
function isPlainSuccess(item: ResultItem, r: ExecutionWithInstance): boolean {
  return (
    item.outcome === 'SUCCESS' &&
    item.async !== true &&
    r.executionShardIndex === null &&
    !RESULT_RECORDED.has(r.executionState) &&
    r.currentExecutionId === item.executionId &&
    (r.state === 'DISPATCHED' || r.state === 'RUNNING')
  );
}

/** The run-log columns a result carries. */
function outcomeOf(item: ResultItem): Omit<ExecutionOutcome, 'state'> {
  return {
    exitCode: item.exitCode ?? null,
    outputTail: item.outputTail ?? null,
    outputTruncated: item.outputTruncated ?? false,
    error: item.error ?? null,
    result: item.data ?? null,
    startedAt: item.startedAt === undefined ? null : new Date(item.startedAt),
    endedAt: new Date(item.endedAt),
  };
}

async function applyResult(
  ctx: BrokerContext,
  conn: Parameters<typeof appendEvents>[0],
  message: ResultMessage,
  item: ResultItem,
  r: ExecutionWithInstance,
  events: NewEvent[],
  effects: Effects,
): Promise<void> {
  const workerId = r.executionWorkerId;
  const base = { instanceId: r.instanceId, executionId: item.executionId, workerId };
  // Idempotent by execution_id: a second result of an execution changes nothing.
  if (RESULT_RECORDED.has(r.executionState) || (item.async === true && r.executionState === 'ASYNC')) return;
  const current = r.currentExecutionId === item.executionId;
  const active = r.state === 'DISPATCHED' || r.state === 'RUNNING';
  if (message.origin !== 'report') effects.releases.push({ workerId, executionId: item.executionId });
  const outcome = outcomeOf(item);
  if (item.async === true) {
    // R15: accepted by an HTTP endpoint (202). The slot is free; the attempt deadline is ours.
    await recordExecutionOutcome(conn, item.executionId, { ...outcome, state: 'ASYNC', open: true });
    if (!current || !active) {
      events.push({ ...base, type: 'FENCED', message: 'async acceptance of a superseded execution' });
      return;
    }
    const deadlineMs = (r.timeoutSeconds ?? 3_600) * 1000;
    if (r.state === 'DISPATCHED') {
      await transitionInstance(conn, {
        id: r.instanceId,
        from: 'DISPATCHED',
        to: 'RUNNING',
        fenceExecutionId: item.executionId,
        set: { lease_until: nowPlusMs(deadlineMs), started_at: { expr: 'COALESCE(started_at, NOW(3))' }, ack_deadline: null },
      });
      await markExecutionAcked(conn, item.executionId);
      await recordExecutionOutcome(conn, item.executionId, { ...outcome, state: 'ASYNC', open: true });
    } else {
      await extendLease(conn, r.instanceId, item.executionId, deadlineMs);
    }
    events.push({ ...base, type: 'ASYNC_ACCEPTED', message: `accepted (HTTP 202); the attempt deadline is ${r.timeoutSeconds ?? 3_600} s` });
    return;
  }
  ctx.metrics.results.inc({ outcome: item.outcome });
  await recordExecutionOutcome(conn, item.executionId, { ...outcome, state: EXECUTION_STATE[item.outcome], reason: item.outcome === 'SUCCESS' ? null : item.outcome });
  if (r.executionShardIndex !== null) {
    // R21: per-shard fencing, success when every shard succeeded, a failed shard retries alone.
    await applyShardResult(ctx, conn, item, r, events, effects);
    return;
  }
  if (current && active) {
    if (item.outcome === 'SUCCESS') {
      const won = await transitionInstance(conn, {
        id: r.instanceId,
        from: r.state,
        to: 'SUCCESS',
        fenceExecutionId: item.executionId,
        set: { reason: null, ended_at: NOW, ack_deadline: null, lease_until: null, started_at: { expr: 'COALESCE(started_at, NOW(3))' } },
      });
      if (won) {
        events.push({ ...base, type: 'SUCCEEDED' });
        finished(effects, r);
      }
      return;
    }
    const failure = failureOf(item);
    const result = await failAttempt(
      ctx,
      conn,
      { instanceId: r.instanceId, taskName: r.taskName, state: r.state, executionId: item.executionId, workerId, attempt: r.attempt, maxAttempts: r.maxAttempts, retry: r.retry },
      failure,
      events,
    );
    if (result === 'final') finished(effects, r);
    return;
  }
  // R17: a late SUCCESS of a superseded execution is adopted while the current one has not ACKed.
  if (!current && item.outcome === 'SUCCESS' && r.state === 'DISPATCHED' && r.currentExecutionId !== null) {
    const superseded = r.currentExecutionId;
    const won = await transitionInstance(conn, {
      id: r.instanceId,
      from: 'DISPATCHED',
      to: 'SUCCESS',
      fenceExecutionId: superseded,
      set: { current_execution_id: item.executionId, worker_id: workerId, reason: null, ended_at: NOW, ack_deadline: null },
    });
    if (won) {
      await setExecutionState(conn, [superseded], 'SUPERSEDED', 'SUPERSEDED', { ended: true });
      events.push(
        { ...base, type: 'ADOPTED', message: `late SUCCESS adopted; execution ${superseded} canceled`, data: { superseded } },
        { ...base, type: 'SUCCEEDED' },
      );
      if (r.workerId !== null) {
        effects.cancels.push({ workerId: r.workerId, executionId: superseded, reason: 'SUPERSEDED' });
        effects.releases.push({ workerId: r.workerId, executionId: superseded });
      }
      finished(effects, r);
      return;
    }
  }
  events.push({ ...base, type: 'FENCED', message: `result ${item.outcome} of a superseded execution recorded, not applied`, data: { outcome: item.outcome } });
  ctx.metrics.fenced.inc({ kind: 'result' });
}

function finished(effects: Effects, r: ExecutionWithInstance): void {
  effects.finishedTasks.add(r.taskName);
  effects.finishedDates.add(r.bizDate);
}

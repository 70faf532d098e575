/**
 * The claim planner (#46): for each claimed instance, in claim order, what the claim does with
 * it — which worker (or which workers, one shard each: R21), or left PENDING and why, or
 * canceled — from the claimed rows, the worker snapshot, the block state (R4), the rerun
 * batches (R20), the team limits (DESIGN §11) and the backlog holds (#22).
 *
 * Pure: no I/O, no clock, no randomness of its own (`random` and `newId` are passed in). Where
 * a decision depends on what a write does — a cancel can lose to another transition, a
 * broadcast reservation to another broker, the round-robin cursor lives in Redis, the NO_WORKER
 * alert is a row — it yields that effect and goes on with the answer, so the claim transaction
 * (dispatch-claim.ts) runs every effect at the same point as before, and the tests answer from a
 * table. Later instances of the batch see what earlier ones took: slots, the block of their
 * task, their team's room and their rerun batch's concurrency.
 */
import { capacityOf, canServe, broadcastTargets, freeSlots, isQueueBlock, routeInstance, slotCapFor, type TeamQuota, type WorkerSnapshot } from '@ax/core';
import type { ActiveRun, ClaimedInstance, RerunBatchLoad, TaskRecord } from '@ax/store';
import type { PoolHold } from './backlog-deferral.js';

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

type Definition = TaskRecord['definition'];

/** What the planner reads; it copies what it counts in (workers, active runs, batches). */
export interface PlanInput {
  /** In claim order (R23's shares, priority first within a team: fair-claim.ts). */
  readonly claimed: readonly ClaimedInstance[];
  readonly tasks: ReadonlyMap<string, TaskRecord>;
  readonly workers: readonly WorkerSnapshot[];
  /** DISPATCHED or RUNNING instances of the blocking tasks, by task name (R4). */
  readonly activeByTask: ReadonlyMap<string, readonly ActiveRun[]>;
  /** block {queue: N}: the earliest waiting slot (ms) of each such task. */
  readonly queueHeads: ReadonlyMap<string, number>;
  /** Rerun batches of the claimed instances (R20). */
  readonly batches: ReadonlyMap<string, RerunBatchLoad>;
  /** The limited teams' room, counted under their row locks; null when none applies. Taken from and given back to. */
  readonly quota: TeamQuota | null;
  /** The backlog hold an instance waits under (#22), or undefined. */
  readonly holdOf: (def: Definition, priority: number) => PoolHold | undefined;
  /** R11: waiting longer than this raises the NO_WORKER alert. */
  readonly noWorkerAlertMs: number;
  readonly random: () => number;
  /** A new execution id (uuidv7 in the broker). */
  readonly newId: () => string;
}

/** Why a claimed instance was left PENDING. */
export type DeferReason = 'held' | 'serial' | 'queue' | 'cover' | 'batch' | 'team' | 'busy';

/** The planner's decision for one claimed instance. */
export type Decision =
  | { readonly instanceId: string; readonly kind: 'dispatch'; readonly workerIds: readonly string[] }
  | { readonly instanceId: string; readonly kind: 'deferred'; readonly why: DeferReason }
  | { readonly instanceId: string; readonly kind: 'no-worker'; readonly why: string }
  | { readonly instanceId: string; readonly kind: 'canceled'; readonly reason: CancelReason }
  /** Its cancel lost (the row moved meanwhile): nothing done, nothing counted. */
  | { readonly instanceId: string; readonly kind: 'untouched' };

export type CancelReason = 'TASK_DELETED' | 'TOO_LATE' | 'DISCARDED';

/** A write the planner needs the outcome of; the answer type is in {@link AnswerOf}. */
export type PlanEffect =
  /** PENDING → CANCELED with an event; answer: won. */
  | { readonly kind: 'cancel'; readonly instance: ClaimedInstance; readonly reason: CancelReason; readonly message: string; readonly data: Record<string, unknown> }
  /** block cover: the running `run` is canceled COVERED by `by`; answer: won. */
  | { readonly kind: 'cover'; readonly run: ActiveRun; readonly by: ClaimedInstance }
  /** R21: reserve one slot per shard, all or nothing; answer: the id of a worker found full, or null when all were reserved. */
  | { readonly kind: 'reserveShards'; readonly shards: ReadonlyArray<{ readonly workerId: string; readonly slots: number; readonly executionId: string }> }
  /** The task's round-robin cursor (incremented per use); answer: the cursor. */
  | { readonly kind: 'cursor'; readonly taskName: string }
  /** R11: the NO_WORKER alert of an instance waiting past `noWorkerAlertMs`; no answer. */
  | { readonly kind: 'alert'; readonly instance: ClaimedInstance; readonly why: string };

export type AnswerOf<E extends PlanEffect> = E extends { kind: 'cancel' | 'cover' }
  ? boolean
  : E extends { kind: 'reserveShards' }
    ? string | null
    : E extends { kind: 'cursor' }
      ? number
      : undefined;

/** The plan of one claim. */
export interface ClaimPlan {
  /** In decision order; the batch's single-worker slots are still to reserve (dispatch-slots.ts). */
  readonly plan: Planned[];
  readonly decisions: Decision[];
  /** The planner's copy of the snapshot, with what it planned counted in. */
  readonly workers: WorkerSnapshot[];
  /** R11: instance ids by route explanation. */
  readonly noWorker: Map<string, string[]>;
  /** DESIGN §11: instance ids by team at its `maxRunning`. */
  readonly teamLimited: Map<string, string[]>;
  /** #22: instance ids by backlogged pool. */
  readonly heldBack: Map<string, { hold: PoolHold; ids: string[] }>;
  /** Block-cover runs whose cancel won (their cancel goes to their worker after the commit). */
  readonly covered: ActiveRun[];
  canceled: number;
  deferred: number;
}

/** The planner: yields effects, returns the plan. Drive it with {@link runPlan} or the claim's driver. */
export function* planClaim(input: PlanInput): Generator<PlanEffect, ClaimPlan, unknown> {
  const workers = input.workers.map((w) => ({ ...w }));
  const activeByTask = new Map(input.activeByTask);
  const batches = new Map(input.batches);
  const { quota } = input;
  const picked = new Set<string>();
  const out: ClaimPlan = { plan: [], decisions: [], workers, noWorker: new Map(), teamLimited: new Map(), heldBack: new Map(), covered: [], canceled: 0, deferred: 0 };
  const defer = (instance: ClaimedInstance, why: DeferReason): void => {
    out.deferred++;
    out.decisions.push({ instanceId: instance.id, kind: 'deferred', why });
  };
  function* cancel(instance: ClaimedInstance, reason: CancelReason, message: string, data: Record<string, unknown>): Generator<PlanEffect, void, unknown> {
    if (yield* ask({ kind: 'cancel', instance, reason, message, data })) {
      out.canceled++;
      out.decisions.push({ instanceId: instance.id, kind: 'canceled', reason });
    } else {
      out.decisions.push({ instanceId: instance.id, kind: 'untouched' });
    }
  }

  for (const instance of input.claimed) {
    const task = input.tasks.get(instance.taskId);
    if (task === undefined) {
      yield* cancel(instance, 'TASK_DELETED', 'its task was deleted before it ran', { reason: 'TASK_DELETED' });
      continue;
    }
    const def = task.definition;
    // R5: only the first attempt of a scheduled slot can be late, on the database clock.
    if (instance.trigger === 'schedule' && instance.attempt === 1 && def.maxLatenessSeconds !== null && instance.lateMs > def.maxLatenessSeconds * 1000) {
      yield* cancel(instance, 'TOO_LATE', `claimed ${instance.lateMs} ms after its slot, over maxLatenessSeconds ${def.maxLatenessSeconds}`, { reason: 'TOO_LATE', lateMs: instance.lateMs });
      continue;
    }
    // #22: below the deferral priority, an instance of a backlogged pool waits (backlog-deferral.ts).
    const hold = input.holdOf(def, instance.priority);
    if (hold !== undefined) {
      const entry = out.heldBack.get(hold.pool) ?? { hold, ids: [] };
      entry.ids.push(instance.id);
      out.heldBack.set(hold.pool, entry);
      defer(instance, 'held');
      continue;
    }
    // R4: the block strategy is enforced where a run starts.
    if (def.block !== 'parallel') {
      const running = activeByTask.get(def.name) ?? [];
      const busy = running.length > 0 || picked.has(def.name);
      if (def.block === 'serial' && busy) {
        defer(instance, 'serial');
        continue;
      }
      if (isQueueBlock(def.block) && (busy || instance.expectedTime.getTime() > (input.queueHeads.get(def.name) ?? Number.POSITIVE_INFINITY))) {
        defer(instance, 'queue');
        continue;
      }
      if (def.block === 'discard' && busy) {
        yield* cancel(instance, 'DISCARDED', 'block discard: an earlier instance still runs', { reason: 'DISCARDED' });
        continue;
      }
      if (def.block === 'cover') {
        if (picked.has(def.name)) {
          defer(instance, 'cover');
          continue;
        }
        for (const run of running) {
          if (!(yield* ask({ kind: 'cover', run, by: instance }))) continue;
          out.covered.push(run);
          out.canceled++;
          quota?.give(def.team); // the covered run no longer counts against its team
        }
        activeByTask.delete(def.name);
      }
    }
    // R20: a rerun batch never runs more than its concurrency at once.
    const batch = instance.rerunBatchId === null ? undefined : batches.get(instance.rerunBatchId);
    if (batch !== undefined && batch.concurrency !== null && batch.active >= batch.concurrency) {
      defer(instance, 'batch');
      continue;
    }
    // DESIGN §11: the team's maxRunning, counted under its row lock (lockTeamQuota).
    if (quota !== null && quota.isFull(def.team)) {
      out.teamLimited.set(def.team, [...(out.teamLimited.get(def.team) ?? []), instance.id]);
      defer(instance, 'team');
      continue;
    }
    const takeRoom = (): void => {
      if (batch !== undefined && instance.rerunBatchId !== null) batches.set(instance.rerunBatchId, { ...batch, active: batch.active + 1 });
      quota?.take(def.team);
      picked.add(def.name);
    };
    if (def.route === 'broadcast') {
      // R21: one execution per matching worker, all or nothing (see README "Broadcast").
      const shards = yield* planBroadcast(workers, instance, task, input.newId);
      if (shards === 'busy') {
        defer(instance, 'busy');
        continue;
      }
      if (shards !== 'none') {
        takeRoom();
        out.plan.push(...shards);
        out.decisions.push({ instanceId: instance.id, kind: 'dispatch', workerIds: shards.map((s) => s.worker.id) });
        continue;
      }
    }
    const pick = def.route === 'broadcast' ? null : yield* chooseWorker(workers, instance, task, input);
    if (pick === null && busyOnly(workers, def)) {
      // Workers that could take it exist but every slot is reserved (R9): backpressure,
      // not R11's "no worker" — it waits silently for a result to free a slot.
      defer(instance, 'busy');
      continue;
    }
    if (pick === null) {
      const why = routeExplanation(workers, task, instance);
      out.noWorker.set(why, [...(out.noWorker.get(why) ?? []), instance.id]);
      out.decisions.push({ instanceId: instance.id, kind: 'no-worker', why });
      if (instance.waitingMs > input.noWorkerAlertMs) yield* ask({ kind: 'alert', instance, why });
      continue;
    }
    takeRoom();
    out.plan.push({ instance, task, worker: pick.worker, executionId: pick.executionId });
    out.decisions.push({ instanceId: instance.id, kind: 'dispatch', workerIds: [pick.worker.id] });
  }
  return out;
}

/** Drops the plans whose slot a worker refused (it filled up meanwhile, R9): they wait for the next claim. */
export function dropRefused(plan: ClaimPlan, refused: ReadonlySet<string>): void {
  if (refused.size === 0) return;
  plan.deferred += refused.size;
  for (let i = plan.plan.length - 1; i >= 0; i--) if (refused.has((plan.plan[i] as Planned).executionId)) plan.plan.splice(i, 1);
}

/**
 * Runs the planner to its end with synchronous answers (tests; default: every cancel wins,
 * every reservation is granted, cursors count up from 0 per task, no alert answer).
 */
export function runPlan(input: PlanInput, answer: (effect: PlanEffect) => unknown = defaultAnswer()): { plan: ClaimPlan; effects: PlanEffect[] } {
  const effects: PlanEffect[] = [];
  const gen = planClaim(input);
  let step = gen.next();
  while (step.done !== true) {
    effects.push(step.value);
    step = gen.next(answer(step.value));
  }
  return { plan: step.value, effects };
}

function defaultAnswer(): (effect: PlanEffect) => unknown {
  const cursors = new Map<string, number>();
  return (effect) => {
    switch (effect.kind) {
      case 'cancel':
      case 'cover':
        return true;
      case 'reserveShards':
        return null;
      case 'cursor': {
        const next = cursors.get(effect.taskName) ?? 0;
        cursors.set(effect.taskName, next + 1);
        return next;
      }
      case 'alert':
        return undefined;
    }
  };
}

function* ask<E extends PlanEffect>(effect: E): Generator<PlanEffect, AnswerOf<E>, unknown> {
  return (yield effect) as AnswerOf<E>;
}

/**
 * R21 at claim: every non-draining worker carrying the task's tags gets one shard. When any
 * of them is full the instance waits ('busy', R9 backpressure); reservations are all or
 * nothing. 'none' = no matching worker (R11).
 */
function* planBroadcast(workers: WorkerSnapshot[], instance: ClaimedInstance, task: TaskRecord, newId: () => string): Generator<PlanEffect, Planned[] | 'busy' | 'none', unknown> {
  const request = { tags: task.definition.tags, team: task.definition.team };
  const matching = workers.filter((w) => canServe(w, request));
  if (matching.length === 0) return 'none';
  if (matching.some((w) => freeSlots(w) <= 0)) return 'busy';
  const targets = broadcastTargets(workers, request);
  if (targets.length !== matching.length) return 'busy';
  const shards = targets.map((t) => ({ workerId: t.worker.id, slots: slotCapFor(t.worker, undefined), executionId: newId() }));
  const fullId = yield* ask({ kind: 'reserveShards', shards });
  if (fullId !== null) {
    // Another broker filled it meanwhile: the driver gave back what this instance took; wait.
    const full = workers.find((w) => w.id === fullId);
    if (full !== undefined) full.running = capacityOf(full);
    return 'busy';
  }
  return targets.map((t, i) => {
    const target = workers.find((w) => w.id === t.worker.id);
    if (target !== undefined) target.running += 1;
    return { instance, task, worker: t.worker, executionId: (shards[i] as { executionId: string }).executionId, shard: { index: t.shardIndex, total: t.shardTotal } };
  });
}

/**
 * Routes one instance over the snapshot (counting it against the chosen worker's free slots);
 * the reservation (R9) is made per worker for the whole batch after the plan (dispatch-slots.ts).
 */
function* chooseWorker(
  workers: WorkerSnapshot[],
  instance: ClaimedInstance,
  task: TaskRecord,
  input: Pick<PlanInput, 'random' | 'newId'>,
): Generator<PlanEffect, { worker: WorkerSnapshot; executionId: string } | null, unknown> {
  const def = task.definition;
  const exclude = instance.rerouteCount > 0 && instance.workerId !== null ? [instance.workerId] : [];
  const strategy = def.route === 'broadcast' ? 'load' : def.route;
  const cursor = strategy === 'round_robin' ? yield* ask({ kind: 'cursor', taskName: def.name }) : 0;
  const priority = instance.priority;
  let decision = routeInstance(strategy, workers, { tags: def.tags, team: def.team, priority, exclude }, { random: input.random, cursor, hashKey: def.name });
  if (decision.kind === 'none' && exclude.length > 0) {
    // The silent worker is the only one left: better it than waiting forever.
    decision = routeInstance(strategy, workers, { tags: def.tags, team: def.team, priority }, { random: input.random, cursor, hashKey: def.name });
  }
  if (decision.kind !== 'single') return null;
  const chosen = decision.worker;
  const target = workers.find((w) => w.id === chosen.id);
  if (target !== undefined) target.running += 1;
  return { worker: chosen, executionId: input.newId() };
}

/** True when some non-draining worker serving the team carries the tags (but none had a free slot). */
function busyOnly(workers: readonly WorkerSnapshot[], def: { readonly tags: readonly string[]; readonly team: string }): boolean {
  return workers.some((w) => canServe(w, def));
}

function routeExplanation(workers: readonly WorkerSnapshot[], task: TaskRecord, instance: ClaimedInstance): string {
  const decision = routeInstance('load', workers, { tags: task.definition.tags, team: task.definition.team }, { random: () => 0 });
  return decision.kind === 'none' ? decision.explanation : `no worker with a free slot could be reserved for instance ${instance.id}`;
}

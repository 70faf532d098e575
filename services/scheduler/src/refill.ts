/**
 * Refill (DESIGN §3, R1, R2): puts the fires of the next `horizonMs` on the time wheel, and
 * reconciles every task's slots between its watermark and now:
 *
 * - a missing slot that is older than `now − fire lock TTL` while a later slot of the task
 *   exists, or that fell due while this scheduler was live, is a *hole* (its lock holder died
 *   or a pause ate it): it is inserted with INSERT IGNORE (R2 re-scan);
 * - the trailing missing slots before this scheduler went live (`liveSince − misfire
 *   threshold`), with no later row, are *missed*: the task's misfire policy decides them
 *   (misfire.ts), recorded by one conditional write of the watermark so a gap is decided once;
 * - the watermark (`last_fire_time`) then advances over every slot whose row exists (or was
 *   decided), and `next_fire_time` is set.
 */
import { isExcludedByCalendar, type CompiledSchedule } from '@ax/core';
import { advanceWatermarks, appendEvents, existingSlotTimes, raiseAlert, recordCalendarSkips, recordMisfireDecision, scheduledTaskWatermarkPages, scheduledTaskWatermarksOf, slotKey, type CalendarSkip, type NewEvent, type SlotOutcome, type SlotRange, type SlotToCreate, type TaskWatermarkRow, type WatermarkMove } from '@ax/store';
import { createSlots, slotOf, type EngineContext } from './context.js';
import { precreatable } from './fire.js';
import { planMisfire, type MisfirePlan } from './misfire.js';
import type { CachedTask } from './task-cache.js';

/** Most `DID_NOT_FIRE` alerts one pass raises (a full outage must not flood the webhook); the rest are logged. */
const MAX_MISSED_ALERTS_PER_PASS = 20;

/** Whether the task has fires of its own to put on the wheel. */
function isScheduled(task: CachedTask): task is CachedTask & { readonly compiled: CompiledSchedule } {
  return task.definition.enabled && task.compiled !== null && task.definition.schedule.type !== 'none';
}

/** Puts upcoming fires on the wheel, from where each task's queue ended. */
export function queueUpcoming(ctx: EngineContext, nowMs: number): void {
  const { wheel, state, config } = ctx;
  const until = nowMs + config.horizonMs;
  for (const task of ctx.cache.all()) {
    if (!isScheduled(task)) continue;
    const q = state.queued.get(task.name);
    // All its fires to `untilMs` are on the wheel and the next is beyond the horizon: nothing to
    // add. (Asking the schedule every second for each of 100,000 tasks was most of the
    // scheduler's CPU and an empty array each, #24.)
    if (q !== undefined && q.version === task.version && q.nextMs !== undefined && (q.nextMs === null || q.nextMs > until)) continue;
    let from: number;
    if (q === undefined) {
      from = Math.max(state.liveSinceMs - config.misfireThresholdMs - 1, task.createdAtMs - 1);
    } else if (q.version !== task.version) {
      wheel.removeTask(task.name);
      from = Math.max(state.lastTickMs ?? nowMs, task.createdAtMs - 1);
    } else {
      from = q.untilMs;
    }
    if (from >= until) continue;
    const fires = task.compiled.between(from, until, config.maxQueuedPerTask);
    const ahead = precreatable(task) ? config.precreateMs : 0;
    for (const ms of fires) wheel.add({ taskName: task.name, version: task.version, expectedMs: ms, ...(ahead > 0 ? { fireAtMs: ms - ahead } : {}) });
    // A full queue ends at its last fire (more come next pass); otherwise it holds every fire
    // to the horizon, and the next one says when there is more to add.
    if (fires.length === config.maxQueuedPerTask) state.queued.set(task.name, { version: task.version, untilMs: fires[fires.length - 1] as number });
    else state.queued.set(task.name, { version: task.version, untilMs: until, nextMs: task.compiled.nextAfter(until) });
  }
  // Tasks gone, disabled or unscheduled leave the wheel. (Not a set of the live names built
  // each pass: with 100,000 tasks, that set and a copy of the queued names were megabytes of
  // garbage a second in V8's large-object space, which only a full collection frees: the heap
  // swelled between collections, #24. A Map may lose entries while it is iterated.) Only when
  // the cache changed since the last check.
  if (state.queuedCheckedGeneration !== ctx.cache.generation) {
    state.queuedCheckedGeneration = ctx.cache.generation;
    for (const name of state.queued.keys()) {
      const task = ctx.cache.get(name);
      if (task === undefined || !isScheduled(task)) {
        state.queued.delete(name);
        wheel.removeTask(name);
      }
    }
  }
  ctx.metrics.wheelSize.set(wheel.size);
}

/** Rows of `task` per `IN` list when only some are read. */
const ROWS_PER_QUERY = 2_000;

/**
 * The task rows a reconcile pass reads, a page at a time. Every `resyncIntervalMs` (default
 * 30 s) all of them, in name order; in between only the rows of tasks that may have work: not
 * read since their definition was (re)loaded, or whose next fire (as of the watermark last
 * read) has come. A row with nothing due stays so until that instant: its watermark only moves
 * forward (a conditional GREATEST), and a later watermark only puts the next fire later.
 * Reading all 100,000 rows every second made the scheduler parse 100,000 rows a second and its
 * heap churn between 450 and 800 MB (#24); the full pass every 30 s still catches what changed
 * behind the cache's back.
 */
async function* rowsToReconcile(ctx: EngineContext, nowMs: number): AsyncGenerator<TaskWatermarkRow[]> {
  const { state } = ctx;
  if (state.lastFullReconcileMs === null || nowMs - state.lastFullReconcileMs >= ctx.config.resyncIntervalMs || nowMs < state.lastFullReconcileMs) {
    state.lastFullReconcileMs = nowMs;
    state.reconcileQuiet.clear();
    yield* scheduledTaskWatermarkPages(ctx.pool); // 5,000 rows at a time (@ax/store task-pages.ts)
    return;
  }
  const names: string[] = [];
  for (const task of ctx.cache.all()) {
    if (!isScheduled(task)) continue;
    const quiet = state.reconcileQuiet.get(task.name);
    if (quiet === undefined || quiet.task !== task || quiet.untilMs <= nowMs) names.push(task.name);
  }
  for (let i = 0; i < names.length; i += ROWS_PER_QUERY) {
    const part = await scheduledTaskWatermarksOf(ctx.pool, names.slice(i, i + ROWS_PER_QUERY));
    if (part.length > 0) yield part;
  }
}

interface TaskWork {
  task: CachedTask;
  /** Watermark as read (null = never fired). */
  rowW: number | null;
  /** Effective watermark: `rowW`, or creation time − 1 ms. */
  w: number;
  /** The latest missed slots (as many as the policy may create), ascending. */
  missed: number[];
  /** Number of missed slots (capped at `maxMisfireSlots`). */
  missedTotal: number;
  plan: MisfirePlan | null;
  holes: number[];
}

/** One reconcile pass over every enabled, scheduled task. Returns the instances created. */
export async function reconcile(ctx: EngineContext, nowMs: number): Promise<number> {
  const { config, state } = ctx;
  const missedCutoff = state.liveSinceMs - config.misfireThresholdMs;
  const holeCutoff = nowMs - config.fireLockTtlMs;
  const works: TaskWork[] = [];
  const ranges: SlotRange[] = [];
  const moves: WatermarkMove[] = [];
  const skips: CalendarSkip[] = [];
  for await (const rows of rowsToReconcile(ctx, nowMs)) {
    for (const r of rows) {
      const task = ctx.cache.get(r.name);
      // A definition the cache does not hold at this version is left to the next reload.
      if (task === undefined || task.version !== Number(r.version) || task.compiled === null) continue;
      const rowW = r.last_fire_time === null ? null : r.last_fire_time.getTime();
      const w = rowW ?? task.createdAtMs - 1;
      skips.push(...calendarSkipsOf(ctx, task, w, nowMs));
      const next = task.compiled.nextAfter(w);
      if (next === null || next > nowMs) {
        // Nothing due: keep next_fire_time (shown by the admin API) current.
        if ((r.next_fire_time?.getTime() ?? null) !== next) moves.push({ taskId: task.id, toMs: null, nextFireMs: next });
        // Quiet until its next fire, or a fire its calendar skips (counted when it passes).
        const rawNext = task.calendar === null || task.raw === null ? null : task.raw.nextAfter(w);
        const until = Math.min(next ?? Infinity, rawNext ?? Infinity);
        state.reconcileQuiet.set(task.name, { task, untilMs: until });
        continue;
      }
      state.reconcileQuiet.delete(task.name);
      works.push({ task, rowW, w, missed: [], missedTotal: 0, plan: null, holes: [] });
      ranges.push({ taskName: task.name, afterMs: w, untilMs: nowMs });
    }
  }
  await countCalendarSkips(ctx, skips);
  if (works.length === 0) {
    await advanceWatermarks(ctx.pool, moves);
    return 0;
  }
  const existing = await existingSlotTimes(ctx.pool, ranges);

  const toCreate: SlotToCreate[] = [];
  for (const work of works) {
    const { task, w } = work;
    const compiled = task.compiled;
    if (compiled === null) continue;
    const ex = existing.get(task.name) ?? [];
    const exSet = new Set(ex);
    // Region before this scheduler went live.
    if (missedCutoff > w) {
      let newestBefore = w;
      // Only rows at real slot times count (a manual trigger's row at its request time does not
      // mean the fleet was firing).
      for (const t of ex) if (t <= missedCutoff && t > newestBefore && compiled.lastAtOrBefore(t) === t) newestBefore = t;
      for (const t of compiled.between(w, newestBefore, config.maxMisfireSlots)) if (!exSet.has(t)) work.holes.push(t);
      const keep = task.definition.misfire.policy === 'catch_up' ? task.definition.misfire.max : 1;
      const tail = lastSlots(compiled, newestBefore, missedCutoff, keep);
      if (tail.length > 0) {
        // Counted forward up to the cap; the slots to create come from the backward walk, so a
        // long outage costs at most `maxMisfireSlots` steps and still picks the real latest slots.
        const counted = compiled.between(newestBefore, missedCutoff, config.maxMisfireSlots);
        const total = Math.max(counted.length, tail.length);
        work.missed = tail;
        work.missedTotal = total;
        work.plan = planMisfire(task.definition.misfire, tail, total);
      }
    }
    // Region while live: holes once their lock TTL has passed.
    const liveFrom = Math.max(w, missedCutoff);
    if (holeCutoff > liveFrom) {
      for (const t of compiled.between(liveFrom, holeCutoff, config.maxQueuedPerTask * 10)) if (!exSet.has(t)) work.holes.push(t);
    }
    for (const t of work.holes) toCreate.push(slotOf(task, t));
    for (const t of work.plan?.create ?? []) toCreate.push(slotOf(task, t));
  }

  const outcomes: Map<string, SlotOutcome> = toCreate.length > 0 ? await createSlots(ctx, toCreate, 'rescan') : new Map<string, SlotOutcome>();
  let created = 0;
  for (const o of outcomes.values()) if (o.kind === 'created') created += 1;
  if (created > 0) ctx.logger.info({ created }, 're-scan created missing slots');

  const events: NewEvent[] = [];
  let alertsRaised = 0;
  for (const work of works) {
    const { task } = work;
    const compiled = task.compiled;
    if (compiled === null) continue;
    let w = work.w;
    const refused = [...work.holes, ...(work.plan?.create ?? [])].some((t) => outcomes.get(slotKey(task.name, t))?.kind === 'refused');
    if (refused) continue; // the definition changed under us; the next pass uses the new one
    if (work.plan !== null && work.missed.length > 0) {
      const last = work.missed[work.missed.length - 1] as number;
      const won = await recordMisfireDecision(ctx.pool, {
        taskId: task.id,
        fromMs: work.rowW,
        toMs: last,
        skipped: work.plan.skipped,
        coalesced: work.plan.coalesced,
      });
      if (won) {
        w = last;
        if (alertsRaised < MAX_MISSED_ALERTS_PER_PASS) {
          alertsRaised += 1;
          // DESIGN §7 "a slot that did not fire": one alert per task and hour of the last missed slot.
          await raiseAlert(ctx.pool, {
            kind: 'DID_NOT_FIRE',
            severity: 'warning',
            subject: `task:${task.name}:${new Date(last).toISOString().slice(0, 13)}`,
            taskName: task.name,
            message: `${work.missedTotal} slot(s) of ${task.name} up to ${new Date(last).toISOString()} did not fire on time; misfire policy ${task.definition.misfire.policy}: ${work.plan.create.length} created, ${work.plan.skipped} skipped, ${work.plan.coalesced} coalesced`,
          });
        }
        ctx.metrics.skipped.inc(work.plan.skipped);
        ctx.metrics.coalesced.inc({ cause: 'misfire' }, work.plan.coalesced);
        ctx.logger.info(
          { taskName: task.name, policy: task.definition.misfire.policy, missed: work.missedTotal, created: work.plan.create.length, skipped: work.plan.skipped, coalesced: work.plan.coalesced },
          'misfire decided',
        );
        const first = work.plan.create[0];
        const firstOutcome = first === undefined ? undefined : outcomes.get(slotKey(task.name, first));
        if (firstOutcome !== undefined && (firstOutcome.kind === 'created' || firstOutcome.kind === 'existed')) {
          events.push({
            instanceId: firstOutcome.instanceId,
            type: work.plan.coalesced > 0 ? 'COALESCED' : 'SKIPPED',
            message: `misfire ${task.definition.misfire.policy}: ${work.missedTotal} missed slots, ${work.plan.create.length} created, ${work.plan.skipped} skipped, ${work.plan.coalesced} coalesced`,
            data: {
              policy: task.definition.misfire.policy,
              missed: work.missedTotal,
              skipped: work.plan.skipped,
              coalesced: work.plan.coalesced,
              lastMissed: new Date(last).toISOString(),
            },
          });
        }
      } else {
        continue; // another scheduler decided this gap; its watermark move stands
      }
    }
    const exSet = new Set(existing.get(task.name) ?? []);
    for (const t of compiled.between(w, nowMs, ctx.config.maxQueuedPerTask * 10)) {
      const o = outcomes.get(slotKey(task.name, t));
      if (exSet.has(t) || (o !== undefined && o.kind !== 'refused')) w = t;
      else break;
    }
    if (w > work.w) moves.push({ taskId: task.id, toMs: w, nextFireMs: compiled.nextAfter(nowMs) });
  }
  await advanceWatermarks(ctx.pool, moves);
  await appendEvents(ctx.pool, events);
  return created;
}

/** Most skipped fires of one task looked at per pass. */
const MAX_SKIPS_PER_TASK = 1_000;

/**
 * The fires of `task`'s own schedule in `(watermark, now]` that its calendar suppressed and
 * this scheduler has not recorded yet (the watermark only moves over fires, so a skipped fire
 * stays in that range until the next real one; `calendarSkipsUntil` keeps it from being
 * offered again at every pass).
 */
function calendarSkipsOf(ctx: EngineContext, task: CachedTask, watermarkMs: number, nowMs: number): CalendarSkip[] {
  const { calendar, raw } = task;
  if (calendar === null || raw === null) return [];
  const key = `${task.name}@${task.version}`;
  const from = Math.max(watermarkMs, ctx.state.calendarSkipsUntil.get(key) ?? Number.NEGATIVE_INFINITY);
  if (from >= nowMs) return [];
  const fires = raw.between(from, nowMs, MAX_SKIPS_PER_TASK);
  ctx.state.calendarSkipsUntil.set(key, fires.length === MAX_SKIPS_PER_TASK ? (fires[fires.length - 1] as number) : nowMs);
  return fires.filter((t) => isExcludedByCalendar(t, calendar)).map((t) => ({ taskId: task.id, expectedMs: t, calendar: calendar.name }));
}

/** Records calendar skips (each once, whoever meets it first); a failure is retried by the next pass. */
async function countCalendarSkips(ctx: EngineContext, skips: readonly CalendarSkip[]): Promise<void> {
  if (skips.length === 0) return;
  try {
    const added = await recordCalendarSkips(ctx.pool, skips);
    if (added > 0) {
      ctx.metrics.calendarSkipped.inc(added);
      ctx.logger.info({ skipped: added }, 'fires skipped by calendars');
    }
  } catch (error) {
    ctx.state.calendarSkipsUntil.clear();
    ctx.logger.warn({ err: error, skips: skips.length }, 'recording calendar skips failed; the next pass tries again');
  }
}

/** The last `count` slots in `(afterMs, untilMs]`, ascending (walking backwards). */
function lastSlots(compiled: NonNullable<CachedTask['compiled']>, afterMs: number, untilMs: number, count: number): number[] {
  const out: number[] = [];
  let t = compiled.lastAtOrBefore(untilMs);
  while (t !== null && t > afterMs && out.length < count) {
    out.unshift(t);
    t = compiled.lastAtOrBefore(t - 1);
  }
  return out;
}

/**
 * DAG readiness (DESIGN §3, R19). A child's instance of biz date D is ready when, for every
 * parent, the parent's watermark has passed the end of D (all of its slots of D exist) and the
 * parent's instances of D are final and satisfy the edge rule (core `childReadiness`):
 * `WAITING → PENDING` (`DEPS_MET`); an upstream failure under `ALL_SUCCESS` cancels it with
 * `UPSTREAM_FAILED`. A child with schedule `none` gets its instance (expected time = start of
 * D in its zone, trigger `dependency`, R1) when its parents are satisfied. Woken by
 * `<ns>:instances-finished` ({@link InstancesFinishedMessage}); a periodic scan is the fallback.
 */
import type { RowDataPacket } from 'mysql2';
import {
  assertTransition,
  childReadiness,
  isInstanceState,
  startOfBizDate,
  type EdgeRule,
  type InstanceState,
  type Readiness,
} from '@ax/core';
import { appendEvents, rerunBatchOfBizDate, withTransaction } from '@ax/store';
import type { ResultSetHeader } from 'mysql2';
import { createSlots, type EngineContext } from './context.js';
import type { CachedTask } from './task-cache.js';

/**
 * Payload of `<ns>:instances-finished`, published by the broker after it applied final results:
 * the task names and biz dates (`YYYY-MM-DD`) of the instances that became final. Either list
 * may be empty (then every WAITING instance is evaluated).
 */
export interface InstancesFinishedMessage {
  readonly taskNames: readonly string[];
  readonly bizDates: readonly string[];
}

/** Parses an `instances-finished` payload; null when it is not one (a wake-up of everything). */
export function parseInstancesFinished(raw: string): InstancesFinishedMessage | null {
  try {
    const v = JSON.parse(raw) as unknown;
    if (typeof v !== 'object' || v === null) return null;
    const o = v as Record<string, unknown>;
    const strings = (x: unknown): string[] => (Array.isArray(x) ? x.filter((s): s is string => typeof s === 'string') : []);
    return { taskNames: strings(o['taskNames']), bizDates: strings(o['bizDates']) };
  } catch {
    return null;
  }
}

/** `YYYY-MM-DD` of a DATE column (read as UTC midnight). */
export function isoDate(d: Date): string {
  return d.toISOString().slice(0, 10);
}

function nextIsoDate(bizDate: string): string {
  return isoDate(new Date(Date.parse(`${bizDate}T00:00:00.000Z`) + 86_400_000));
}

/** What the evaluation did. */
export interface DagResult {
  promoted: number;
  canceled: number;
  created: number;
}

/** Readiness of `child` for `bizDate`, from the parents' watermarks and instance states. */
async function readinessOf(ctx: EngineContext, child: CachedTask, bizDate: string, watermarks: Map<string, number | null>): Promise<Readiness> {
  const parents = child.parents;
  if (parents.length === 0) return 'ready';
  const [rows] = await ctx.pool.query<Array<RowDataPacket & { task_name: string; state: string }>>(
    'SELECT task_name, state FROM task_instance WHERE biz_date = ? AND task_name IN (?)',
    [bizDate, parents.map((p) => p.parent)],
  );
  const edges: Array<{ rule: EdgeRule; parentStates: Array<InstanceState | null> }> = [];
  for (const p of parents) {
    const parentTask = ctx.cache.get(p.parent);
    const states = rows.filter((r) => r.task_name === p.parent).map((r) => (isInstanceState(r.state) ? r.state : null));
    if (parentTask === undefined) return 'wait'; // parent unknown here yet: wait (timeout ends it)
    const pd = parentTask.definition;
    if (pd.schedule.type === 'none' || parentTask.compiled === null) {
      // Manual/dependency-only parent: its instances of D are all it has; none yet = wait.
      if (states.length === 0) return 'wait';
    } else {
      const endOfD = startOfBizDate(nextIsoDate(bizDate), pd.schedule.timezone, pd.bizDateOffsetDays);
      const w = watermarks.get(p.parent) ?? null;
      const next = parentTask.compiled.nextAfter(w ?? parentTask.createdAtMs - 1);
      if (next !== null && next < endOfD) states.push(null); // a slot of D not created yet
    }
    edges.push({ rule: p.rule, parentStates: states });
  }
  return childReadiness(edges);
}

/** Evaluates WAITING instances (and dependency-only children); `hint` narrows the work. */
export async function evaluateDag(ctx: EngineContext, hint: InstancesFinishedMessage | null = null): Promise<DagResult> {
  const result: DagResult = { promoted: 0, canceled: 0, created: 0 };
  const childNames = new Set<string>();
  if (hint !== null && hint.taskNames.length > 0) {
    for (const n of hint.taskNames) for (const c of ctx.cache.childrenOf(n)) childNames.add(c);
    if (childNames.size === 0) return result;
  }
  const [wm] = await ctx.pool.query<Array<RowDataPacket & { name: string; last_fire_time: Date | null }>>(
    'SELECT name, last_fire_time FROM task',
  );
  const watermarks = new Map(wm.map((r) => [r.name, r.last_fire_time === null ? null : r.last_fire_time.getTime()]));

  // 1. WAITING instances.
  const filter = childNames.size > 0 ? ' AND task_name IN (?)' : '';
  const [waiting] = await ctx.pool.query<Array<RowDataPacket & { id: string; task_name: string; biz_date: Date }>>(
    `SELECT id, task_name, biz_date FROM task_instance WHERE state = 'WAITING'${filter} ORDER BY id LIMIT 2000`,
    childNames.size > 0 ? [[...childNames]] : [],
  );
  const memo = new Map<string, Readiness>();
  for (const w of waiting) {
    const child = ctx.cache.get(w.task_name);
    if (child === undefined || child.parents.length === 0) continue;
    const bizDate = isoDate(w.biz_date);
    const key = `${child.name}|${bizDate}`;
    let readiness = memo.get(key);
    if (readiness === undefined) {
      readiness = await readinessOf(ctx, child, bizDate, watermarks);
      memo.set(key, readiness);
    }
    if (readiness === 'ready') {
      if (await transition(ctx, String(w.id), 'PENDING', null, 'DEPS_MET', 'every parent edge is satisfied')) result.promoted += 1;
    } else if (readiness === 'cancel') {
      if (await transition(ctx, String(w.id), 'CANCELED', 'UPSTREAM_FAILED', 'CANCELED', 'a parent failed or was canceled (ALL_SUCCESS)')) result.canceled += 1;
    }
  }

  // 2. Dependency-only children (schedule none) of parents that have instances of a biz date.
  // Only parents whose edge may create the child's instances count (`createsChild`: the same
  // team, or an edge the child's team allowed; #44): a parent of another team never creates
  // runs of a child its team did not let it.
  for (const child of ctx.cache.all()) {
    if (child.parents.length === 0 || child.definition.schedule.type !== 'none' || !child.definition.enabled) continue;
    if (childNames.size > 0 && !childNames.has(child.name)) continue;
    const creators = child.parents.filter((p) => p.createsChild).map((p) => p.parent);
    if (creators.length === 0) continue;
    if (hint !== null && hint.taskNames.length > 0 && !hint.taskNames.some((n) => creators.includes(n))) continue;
    let dates: string[];
    if (hint !== null && hint.bizDates.length > 0) dates = [...hint.bizDates];
    else {
      const [d] = await ctx.pool.query<Array<RowDataPacket & { biz_date: Date }>>(
        `SELECT DISTINCT biz_date FROM task_instance WHERE task_name IN (?) AND state IN ('SUCCESS','FAILED','CANCELED')
            AND updated_at >= ? ORDER BY biz_date DESC LIMIT 31`,
        [creators, new Date(ctx.clock.nowMs() - (child.definition.dependencyTimeoutSeconds ?? ctx.config.dependencyTimeoutSeconds) * 1000)],
      );
      dates = d.map((r) => isoDate(r.biz_date));
    }
    for (const bizDate of dates) {
      const [have] = await ctx.pool.query<RowDataPacket[]>('SELECT 1 FROM task_instance WHERE task_name = ? AND biz_date = ? LIMIT 1', [child.name, bizDate]);
      if (have.length > 0) continue;
      if ((await readinessOf(ctx, child, bizDate, watermarks)) !== 'ready') continue;
      const def = child.definition;
      const expectedMs = startOfBizDate(bizDate, def.schedule.timezone, def.bizDateOffsetDays);
      // A child of a rerun or backfill's runs is part of that batch (#47): counted, and not
      // created once the batch is canceled (a cancel stops the runs that have not started).
      const batch = await rerunBatchOfBizDate(ctx.pool, creators, bizDate);
      if (batch?.canceled === true) continue;
      const outcomes = await createSlots(
        ctx,
        [
          {
            taskId: child.id,
            taskName: child.name,
            version: child.version,
            expectedMs,
            bizDate,
            trigger: 'dependency',
            state: 'PENDING',
            maxAttempts: def.retry.max + 1,
            serial: false,
            rerunBatchId: batch?.id ?? null,
          },
        ],
        'dependency',
      );
      for (const o of outcomes.values()) if (o.kind === 'created') result.created += 1;
    }
  }
  if (result.promoted > 0) {
    ctx.metrics.dag.inc({ kind: 'deps_met' }, result.promoted);
    await publishReady(ctx, result.promoted);
  }
  if (result.canceled > 0) ctx.metrics.dag.inc({ kind: 'upstream_failed' }, result.canceled);
  if (result.created > 0) ctx.metrics.dag.inc({ kind: 'created' }, result.created);
  return result;
}

/**
 * One conditional transition of a WAITING instance (checked against core's table), with its
 * event, in one transaction. Returns whether this call made it.
 */
export async function transition(
  ctx: EngineContext,
  instanceId: string,
  to: 'PENDING' | 'CANCELED',
  reason: string | null,
  eventType: 'DEPS_MET' | 'CANCELED',
  message: string,
): Promise<boolean> {
  assertTransition('WAITING', to);
  return withTransaction(ctx.pool, async (conn) => {
    const [res] = await conn.query<ResultSetHeader>(
      // A promotion stamps promoted_at (migration 0006): the dashboard counts the instance as
      // due from then, read from an index instead of from every instance's events.
      `UPDATE task_instance SET state = ?, reason = ?, ${to === 'CANCELED' ? 'ended_at = CURRENT_TIMESTAMP(3)' : 'promoted_at = CURRENT_TIMESTAMP(3)'}
        WHERE id = ? AND state = 'WAITING'`,
      [to, reason, instanceId],
    );
    if (res.affectedRows !== 1) return false;
    await appendEvents(conn, [{ instanceId, type: eventType, message, data: reason === null ? null : { reason } }]);
    return true;
  });
}

async function publishReady(ctx: EngineContext, count: number): Promise<void> {
  try {
    await ctx.redis.publish(ctx.keys.channels.instancesReady, JSON.stringify({ count }));
  } catch (error) {
    ctx.logger.warn({ err: error }, 'publishing instances-ready failed');
  }
}

/**
 * The backlog scan (#45, DESIGN R23 and §11 "Noisy neighbours"; ADMIN-API.md "Waiting
 * instances"): every `backlogScanMs`, each broker reads the due instances that are not
 * dispatched (WAITING and PENDING, `readBacklog`: one bounded range of the claim's team index
 * per state and team, no lock), gathers what holds them in a few grouped reads, classifies each
 * with `classifyWaiting` (@ax/core) and then
 *
 * - stores the reason where it changed, with one `WAITING` event per change
 *   (`writeWaitingChanges`: one short transaction, the changed rows locked `SKIP LOCKED` and
 *   re-checked, so brokers scanning at once write each change once and never wait for a claim);
 * - exports the real backlog by team and reason: `ax_backlog_instances` and
 *   `ax_backlog_oldest_seconds` (every broker exports the same reading; aggregate with `max`);
 * - raises a team's `BACKLOG` alert when more than `AX_BACKLOG_ALERT_INSTANCES` of its instances
 *   are held for a reason other than UPSTREAM (DAG children waiting for their parents are the
 *   plan, not a backlog), once per team and hour, naming its oldest held instance so the alert
 *   carries the team and goes to that team's routes.
 *
 * Why a separate pass and not the claim: the claim reads only rows that can start (R23) and
 * must stay that way; held rows are classified here, off the dispatch path, at a pace that does
 * not depend on how many there are.
 */
import { classifyWaiting, isQueueBlock, type RunningSibling, type WaitingReason, type WaitingVerdict } from '@ax/core';
import {
  activeRunsByTeam,
  activeRunsOfTasks,
  backlogGroups,
  batchLoadsUnlocked,
  clearStaleWaiting,
  earliestWaitingSlots,
  isDispatchPaused,
  loadTasksById,
  raiseAlert,
  readBacklog,
  writeWaitingChanges,
  type BacklogRow,
  type TaskRecord,
  type WaitingChange,
} from '@ax/store';
import type { BrokerContext } from './context.js';
import { inTransaction } from './transaction.js';

/** Count and oldest due age of one (team, reason). */
export interface BacklogCell {
  count: number;
  oldestDueMs: number;
  /** The instance due longest (the alert names it). */
  oldestId: string;
}

/** What one pass saw and did (tests, logs). */
export interface BacklogScanOutcome {
  /** Rows read. */
  readonly read: number;
  /** team → reason → count and oldest age. */
  readonly backlog: ReadonlyMap<string, ReadonlyMap<WaitingReason, BacklogCell>>;
  /** Rows whose stored reason this broker changed. */
  readonly changed: number;
  /** Teams whose BACKLOG alert this pass raised (new alerts only). */
  readonly alerted: readonly string[];
}

/** Rows written per transaction (one UPDATE and one event INSERT each). */
const WRITE_CHUNK = 500;
/** Stale reasons cleared per pass. */
const CLEAR_LIMIT = 1_000;

/** One pass. */
export async function scanBacklogOnce(ctx: BrokerContext): Promise<BacklogScanOutcome> {
  const { pool, config } = ctx;
  const rows: BacklogRow[] = [];
  for (const group of await backlogGroups(pool)) {
    const read = await readBacklog(pool, group, config.backlogScanLimit);
    if (read.length >= config.backlogScanLimit) {
      ctx.logger.warn({ state: group.state, team: group.team, limit: config.backlogScanLimit }, 'backlog scan read its limit for one team: its counts are floors this pass');
    }
    rows.push(...read);
  }
  const verdicts = await classifyRows(ctx, rows);
  const backlog = aggregate(rows, verdicts);
  exportMetrics(ctx, backlog);

  const changes: WaitingChange[] = [];
  for (const row of rows) {
    const verdict = verdicts.get(row.id) ?? null;
    const to = verdict?.reason ?? null;
    if (to === row.waitingReason) continue; // the same reason: nothing to write, no event
    changes.push({ id: row.id, state: row.state, from: row.waitingReason, to, message: verdict?.message ?? null });
  }
  let changed = 0;
  for (let i = 0; i < changes.length; i += WRITE_CHUNK) {
    const chunk = changes.slice(i, i + WRITE_CHUNK);
    changed += (await inTransaction(ctx, (conn) => writeWaitingChanges(conn, chunk))).length;
  }
  await inTransaction(ctx, (conn) => clearStaleWaiting(conn, CLEAR_LIMIT));
  const alerted = await raiseBacklogAlerts(ctx, backlog);
  return { read: rows.length, backlog, changed, alerted };
}

/** The verdict of every row (absent: not held), from a few grouped plain reads. */
async function classifyRows(ctx: BrokerContext, rows: readonly BacklogRow[]): Promise<Map<string, WaitingVerdict>> {
  const out = new Map<string, WaitingVerdict>();
  if (rows.length === 0) return out;
  const { pool, config } = ctx;
  const pending = rows.filter((r) => r.state === 'PENDING');
  const [dispatchPaused, workers, tasks] = await Promise.all([
    isDispatchPaused(pool),
    ctx.workers.snapshots(),
    loadTasksById(pool, pending.map((r) => r.taskId), ctx.definitions),
  ]);
  const blocking = [...tasks.values()].filter((t) => t.definition.block === 'serial' || isQueueBlock(t.definition.block));
  const running = new Map<string, RunningSibling[]>();
  for (const run of await activeRunsOfTasks(pool, blocking.map((t) => t.definition.name))) {
    running.set(run.taskName, [...(running.get(run.taskName) ?? []), { id: run.id, state: run.state, workerId: run.workerId }]);
  }
  const queueTasks = blocking.filter((t) => isQueueBlock(t.definition.block)).map((t) => t.definition.name);
  const queueHeads = await earliestWaitingSlots(pool, queueTasks);
  const headIds = new Map<string, string>(); // the head's id when the scan read it
  for (const r of pending) if (queueHeads.get(r.taskName) === r.expectedTime.getTime()) headIds.set(r.taskName, r.id);
  const batches = await batchLoadsUnlocked(pool, pending.flatMap((r) => (r.rerunBatchId === null ? [] : [r.rerunBatchId])));
  const limits = ctx.teams.limited();
  const active = limits.size === 0 ? new Map<string, number>() : await activeRunsByTeam(pool, [...limits.keys()]);

  for (const row of rows) {
    const task: TaskRecord | undefined = row.state === 'PENDING' ? tasks.get(row.taskId) : undefined;
    const def = task?.definition;
    const team = row.team ?? def?.team ?? '';
    const head = queueHeads.get(row.taskName);
    const batch = row.rerunBatchId === null ? undefined : batches.get(row.rerunBatchId);
    const max = limits.get(team);
    const hold = def === undefined ? undefined : ctx.backlogHolds.holdOf(def, row.priority);
    const verdict = classifyWaiting({
      instanceId: row.id,
      state: row.state,
      team,
      priority: row.priority,
      expectedTimeMs: row.expectedTime.getTime(),
      dueForMs: row.dueForMs,
      dispatchPaused,
      task: def === undefined ? undefined : { name: def.name, block: def.block, tags: def.tags },
      running: running.get(row.taskName) ?? [],
      queueHead: head === undefined ? undefined : { expectedTimeMs: head, instanceId: headIds.get(row.taskName) ?? null },
      batch: batch === undefined || row.rerunBatchId === null ? undefined : { id: row.rerunBatchId, ...batch },
      teamLimit: max === undefined ? undefined : { maxRunning: max, active: active.get(team) ?? 0 },
      backlogHold: hold === undefined ? undefined : { pool: hold.pool, belowPriority: ctx.backlogHolds.policy.belowPriority },
      workers,
      dispatchRatePerSecond: config.dispatchRatePerSecond,
      // A startable row is "in flight" for one dispatch poll plus a scan period's slack.
      graceMs: config.dispatchPollMs + config.backlogScanMs,
    });
    if (verdict !== null) out.set(row.id, verdict);
  }
  return out;
}

/** team → reason → count and oldest age. */
export function aggregate(rows: readonly BacklogRow[], verdicts: ReadonlyMap<string, WaitingVerdict>): Map<string, Map<WaitingReason, BacklogCell>> {
  const out = new Map<string, Map<WaitingReason, BacklogCell>>();
  for (const row of rows) {
    const verdict = verdicts.get(row.id);
    if (verdict === undefined) continue;
    const team = row.team ?? '';
    const byReason = out.get(team) ?? new Map<WaitingReason, BacklogCell>();
    out.set(team, byReason);
    const cell = byReason.get(verdict.reason);
    if (cell === undefined) byReason.set(verdict.reason, { count: 1, oldestDueMs: row.dueForMs, oldestId: row.id });
    else {
      cell.count += 1;
      if (row.dueForMs > cell.oldestDueMs) {
        cell.oldestDueMs = row.dueForMs;
        cell.oldestId = row.id;
      }
    }
  }
  return out;
}

/** Replaces the backlog series with this reading (a (team, reason) no longer held disappears). */
function exportMetrics(ctx: BrokerContext, backlog: ReadonlyMap<string, ReadonlyMap<WaitingReason, BacklogCell>>): void {
  ctx.metrics.backlogInstances.reset();
  ctx.metrics.backlogOldestSeconds.reset();
  for (const [team, byReason] of backlog) {
    for (const [reason, cell] of byReason) {
      ctx.metrics.backlogInstances.set({ team, reason }, cell.count);
      ctx.metrics.backlogOldestSeconds.set({ team, reason }, cell.oldestDueMs / 1000);
    }
  }
}

/** Raises BACKLOG for each team over the threshold (deduplicated per team and hour); returns the teams newly alerted. */
async function raiseBacklogAlerts(ctx: BrokerContext, backlog: ReadonlyMap<string, ReadonlyMap<WaitingReason, BacklogCell>>): Promise<string[]> {
  const alerted: string[] = [];
  const threshold = ctx.config.backlogAlertInstances;
  for (const [team, byReason] of backlog) {
    if (team === '') continue;
    const held = [...byReason].filter(([reason]) => reason !== 'UPSTREAM');
    const total = held.reduce((n, [, cell]) => n + cell.count, 0);
    if (total <= threshold) continue;
    const oldest = held.reduce((a, b) => (b[1].oldestDueMs > a[1].oldestDueMs ? b : a));
    const parts = held.sort((a, b) => b[1].count - a[1].count).map(([reason, cell]) => `${reason} ${cell.count}`);
    const raised = await raiseAlert(ctx.pool, {
      kind: 'BACKLOG',
      severity: 'warning',
      subject: `team:${team}:${new Date().toISOString().slice(0, 13)}`,
      // The oldest held instance: it names the team, so the alert goes to that team's routes.
      instanceId: oldest[1].oldestId,
      reason: oldest[0],
      message: `team ${team} has ${total} due instances not dispatched, over AX_BACKLOG_ALERT_INSTANCES ${threshold} (${parts.join(', ')}); the oldest, instance ${oldest[1].oldestId}, has been due ${Math.round(oldest[1].oldestDueMs / 1000)} s (${oldest[0]})`,
    });
    if (raised) alerted.push(team);
  }
  return alerted;
}

/**
 * Classifies one due, undispatched instance (ADMIN-API.md "Waiting instances", R23): the first
 * thing that holds it, in the order the dispatch loop checks them (dispatch.ts), so the reason
 * shown is the one the claim would act on. Pure: the broker's backlog scan gathers the facts in
 * a few plain reads and calls this per row; nothing here reads a clock or a database.
 */
import type { BlockStrategy } from '../task/definition.js';
import { canServe, freeSlots, type WorkerSnapshot } from '../routing/worker-snapshot.js';
import type { WaitingVerdict } from './reasons.js';

/** An instance of the same task that is DISPATCHED or RUNNING. */
export interface RunningSibling {
  readonly id: string;
  readonly state: 'DISPATCHED' | 'RUNNING';
  readonly workerId: string | null;
}

/** What the classification of one instance needs to know. */
export interface WaitingFacts {
  readonly instanceId: string;
  /** `WAITING` (DAG parents not satisfied) or `PENDING`. */
  readonly state: 'WAITING' | 'PENDING';
  readonly team: string;
  readonly priority: number;
  readonly expectedTimeMs: number;
  /** How long it has been due (database clock), ms. */
  readonly dueForMs: number;
  /** The global dispatch pause (`POST /dispatch/pause`). */
  readonly dispatchPaused: boolean;
  /** Its task's definition; undefined when the task is gone (the claim cancels it: not held). */
  readonly task: { readonly name: string; readonly block: BlockStrategy; readonly tags: readonly string[] } | undefined;
  /** The task's instances now DISPATCHED or RUNNING (R4). */
  readonly running: readonly RunningSibling[];
  /** `{queue}` tasks: the earliest waiting slot of the task (epoch ms) and its instance. */
  readonly queueHead?: { readonly expectedTimeMs: number; readonly instanceId: string | null } | undefined;
  /** Its rerun batch, when it has one with a concurrency (R20). */
  readonly batch?: { readonly id: string; readonly concurrency: number | null; readonly active: number } | undefined;
  /** Its team's `maxRunning` and what the team has DISPATCHED or RUNNING now (DESIGN §11). */
  readonly teamLimit?: { readonly maxRunning: number; readonly active: number } | undefined;
  /** Backlog deferral (#22): the hold of its pool that covers it, if any. */
  readonly backlogHold?: { readonly pool: string; readonly belowPriority: number } | undefined;
  /** Live workers (the registry), with their reserved slots. */
  readonly workers: readonly WorkerSnapshot[];
  /** `AX_DISPATCH_RATE`, undefined = unlimited. */
  readonly dispatchRatePerSecond?: number | undefined;
  /**
   * How long a startable instance may be due before it counts as held: one dispatch round
   * (the claim runs every poll and on every wake-up), so work in flight is not reported.
   */
  readonly graceMs: number;
}

const MAX_LISTED = 5;

/** `a, b, c and 2 more` for messages. */
function listed(items: readonly string[]): string {
  if (items.length <= MAX_LISTED) return items.join(', ');
  return `${items.slice(0, MAX_LISTED).join(', ')} and ${items.length - MAX_LISTED} more`;
}

/** The reason it waits, or null when nothing holds it (it is startable and will be claimed). */
export function classifyWaiting(f: WaitingFacts): WaitingVerdict | null {
  if (f.state === 'WAITING') {
    return { reason: 'UPSTREAM', message: `waits for its upstream tasks: not every parent instance of its business date has finished as its edge rule requires` };
  }
  if (f.dispatchPaused) return { reason: 'DISPATCH_PAUSED', message: 'all dispatching is paused by an admin (POST /api/v1/dispatch/resume ends it)' };
  const task = f.task;
  if (task === undefined) return null;
  if (f.backlogHold !== undefined) {
    return {
      reason: 'BACKLOG_HOLD',
      message: `held by backlog deferral: its priority ${f.priority} is below ${f.backlogHold.belowPriority} while worker pool ${f.backlogHold.pool} is backlogged with more important work`,
    };
  }
  if (task.block !== 'parallel' && task.block !== 'discard' && task.block !== 'cover') {
    const run = f.running[0];
    if (run !== undefined) {
      const others = f.running.length > 1 ? ` (and ${f.running.length - 1} more)` : '';
      const where = run.workerId === null ? '' : ` on worker ${run.workerId}`;
      const kind = task.block === 'serial' ? 'serial' : `queue of ${task.block.queue}`;
      return { reason: 'SERIAL_BUSY', message: `task ${task.name} (block ${kind}) already has instance ${run.id} ${run.state}${where}${others}` };
    }
    if (typeof task.block === 'object' && f.queueHead !== undefined && f.expectedTimeMs > f.queueHead.expectedTimeMs) {
      const head = f.queueHead.instanceId === null ? `the slot of ${new Date(f.queueHead.expectedTimeMs).toISOString()}` : `instance ${f.queueHead.instanceId}`;
      return { reason: 'QUEUE_POSITION', message: `task ${task.name} runs its slots in order: ${head} goes first` };
    }
  }
  if (f.batch !== undefined && f.batch.concurrency !== null && f.batch.active >= f.batch.concurrency) {
    return { reason: 'BATCH_CONCURRENCY', message: `rerun batch ${f.batch.id} runs ${f.batch.active} of its concurrency ${f.batch.concurrency}` };
  }
  if (f.teamLimit !== undefined && f.teamLimit.active >= f.teamLimit.maxRunning) {
    return { reason: 'TEAM_LIMIT', message: `team ${f.team} has ${f.teamLimit.active}/${f.teamLimit.maxRunning} instances DISPATCHED or RUNNING (its maxRunning)` };
  }
  const request = { tags: task.tags, team: f.team };
  const serving = f.workers.filter((w) => canServe(w, request));
  if (serving.length === 0) return { reason: 'NO_WORKER', message: noWorkerMessage(f.workers, f.team, task.tags) };
  if (f.dueForMs <= f.graceMs) return null;
  if (serving.every((w) => freeSlots(w, f.priority) <= 0)) {
    const slots = serving.reduce((n, w) => n + w.slots, 0);
    return {
      reason: 'QUEUE_POSITION',
      message: `waits its turn for a slot: all ${slots} slots of the ${serving.length} worker(s) that can take it (${listed(serving.map((w) => w.id))}) are taken`,
    };
  }
  if (f.dispatchRatePerSecond !== undefined) {
    return { reason: 'RATE_LIMIT', message: `dispatch is limited to ${f.dispatchRatePerSecond} per second over all brokers (AX_DISPATCH_RATE)` };
  }
  return null;
}

/** Names what is missing: no worker of the team at all, or none carrying the tags. */
function noWorkerMessage(workers: readonly WorkerSnapshot[], team: string, tags: readonly string[]): string {
  const ofTeam = workers.filter((w) => !w.draining && canServe(w, { tags: [], team }));
  if (ofTeam.length === 0) {
    const draining = workers.filter((w) => w.draining && canServe({ ...w, draining: false }, { tags: [], team })).length;
    return `no live worker serves team ${team}${draining > 0 ? ` (${draining} draining)` : ''}`;
  }
  const missing = tags.filter((tag) => !ofTeam.some((w) => w.tags.includes(tag)));
  const tagText = tags.length === 0 ? '' : ` [${tags.join(', ')}]`;
  if (missing.length > 0) return `no live worker of team ${team} offers tag(s) ${listed(missing)} of its tags${tagText}`;
  return `no live worker of team ${team} carries all of its tags${tagText} together`;
}

/** What the broker knows about a worker when routing (from the Redis registry, R9, R14). */

/**
 * Slots a worker keeps for urgent work (`AX_WORKER_RESERVED_SLOTS`, issue #22): an instance of
 * priority below `minPriority` is started there only while more than `slots` of its slots are
 * free, so a hung low-priority report never holds the slots order-status sync needs.
 */
export interface ReservedSlots {
  /** Slots kept free for priority ≥ `minPriority` (at least 1, below the worker's slots). */
  readonly slots: number;
  /** Lowest priority (0..9) that may use them. */
  readonly minPriority: number;
}

/** A worker as the router sees it. */
export interface WorkerSnapshot {
  /** Worker id (`AX_WORKER_ID`); also its queue name suffix. */
  id: string;
  /** Tags it carries; a task runs only on workers carrying all of the task's tags. */
  tags: readonly string[];
  /**
   * Teams whose work it takes (`AX_WORKER_TEAMS`); empty or absent = every team (workers from
   * before teams advertise none). An instance goes only to workers serving its task's team.
   */
  teams?: readonly string[];
  /** CPU cores (the load score divides `running` by it; ≤ 0 counts as 1). */
  cores: number;
  /** Concurrent executions it accepts. */
  slots: number;
  /**
   * Dispatches it holds beyond its slots, ACKed and started locally when a slot frees (R9
   * prefetch, `AX_WORKER_JOB_PREFETCH`): it is reserved up to `slots + prefetch`. Absent = 0.
   */
  prefetch?: number;
  /** Slots reserved on it right now: dispatched, held and running executions (R9). */
  running: number;
  /** Average execution duration over the last 5 minutes, milliseconds (0 when none ran). */
  avgDurationMs5m: number;
  /** Slots kept for high priority; absent = none. */
  reservedSlots?: ReservedSlots;
  /** True once drained (admin API) or shutting down: no new work. */
  draining: boolean;
  /** Host name, for display. */
  host?: string;
  /** Software version, for display. */
  version?: string;
}

/** What a routing decision needs to know about the instance. */
export interface RouteRequest {
  /** The task's tags; the worker must carry every one. */
  tags: readonly string[];
  /** The task's team; the worker must serve it (see `servesTeam`). Absent = any worker. */
  team?: string;
  /** The instance's priority (0..9); absent = as if the highest (reserved slots are open to it). */
  priority?: number;
  /** Workers not to use: e.g. the one that stayed silent on the previous dispatch (§4). */
  exclude?: ReadonlySet<string> | readonly string[];
}

/** Why a worker cannot take the instance. */
export type Ineligibility = 'EXCLUDED' | 'DRAINING' | 'OTHER_TEAMS' | 'MISSING_TAGS' | 'NO_FREE_SLOT';

function isExcluded(id: string, exclude: RouteRequest['exclude']): boolean {
  if (exclude === undefined) return false;
  return exclude instanceof Set ? exclude.has(id) : (exclude as readonly string[]).includes(id);
}

/** True when `priority` may not use the worker's reserved slots. */
function isBelowReserve(worker: Pick<WorkerSnapshot, 'reservedSlots'>, priority: number | undefined): boolean {
  const reserve = worker.reservedSlots;
  return priority !== undefined && reserve !== undefined && priority < reserve.minPriority;
}

/**
 * How many executions the worker may be reserved for (R9): its slots plus its prefetch. A
 * skewed worker advertises 0 slots and holds nothing more either.
 */
export function capacityOf(worker: Pick<WorkerSnapshot, 'slots' | 'prefetch'>): number {
  return worker.slots <= 0 ? 0 : worker.slots + (worker.prefetch ?? 0);
}

/**
 * Free slots of a worker (never negative) for an instance of `priority`, its prefetch included
 * (R9): below the worker's reserve priority, the reserved slots do not count as free (absent
 * priority: all count).
 */
export function freeSlots(worker: WorkerSnapshot, priority?: number): number {
  const free = Math.max(0, capacityOf(worker) - worker.running);
  return isBelowReserve(worker, priority) ? Math.max(0, free - (worker.reservedSlots?.slots ?? 0)) : free;
}

/**
 * Most executions the worker may hold once one of `priority` is added — the cap of its slot
 * reservation (R9): its slots plus its prefetch, less the reserved ones below the reserve priority.
 */
export function slotCapFor(worker: Pick<WorkerSnapshot, 'slots' | 'prefetch' | 'reservedSlots'>, priority: number | undefined): number {
  const cap = capacityOf(worker);
  return isBelowReserve(worker, priority) ? Math.max(0, cap - (worker.reservedSlots?.slots ?? 0)) : cap;
}

/** True when `worker` takes work of `team`: it serves every team (none listed) or lists it. */
export function servesTeam(worker: Pick<WorkerSnapshot, 'teams'>, team: string | undefined): boolean {
  const teams = worker.teams;
  return team === undefined || teams === undefined || teams.length === 0 || teams.includes(team);
}

/**
 * True when `worker` could ever take the instance (not draining, serving its team, carrying its
 * tags), whether or not it has a free slot now: the broker's "busy, not missing" test (R9 vs R11).
 */
export function canServe(worker: WorkerSnapshot, request: Pick<RouteRequest, 'tags' | 'team'>): boolean {
  return !worker.draining && servesTeam(worker, request.team) && request.tags.every((tag) => worker.tags.includes(tag));
}

/** Why `worker` cannot take the instance, or null when it can. */
export function ineligibility(worker: WorkerSnapshot, request: RouteRequest): Ineligibility | null {
  if (isExcluded(worker.id, request.exclude)) return 'EXCLUDED';
  if (worker.draining) return 'DRAINING';
  if (!servesTeam(worker, request.team)) return 'OTHER_TEAMS';
  if (!request.tags.every((tag) => worker.tags.includes(tag))) return 'MISSING_TAGS';
  if (freeSlots(worker, request.priority) <= 0) return 'NO_FREE_SLOT';
  return null;
}

/** True when `worker` serves the team, carries every tag, has a free slot, is not draining and not excluded. */
export function isEligible(worker: WorkerSnapshot, request: RouteRequest): boolean {
  return ineligibility(worker, request) === null;
}

/** The eligible workers, in input order. */
export function eligibleWorkers(workers: readonly WorkerSnapshot[], request: RouteRequest): WorkerSnapshot[] {
  return workers.filter((worker) => isEligible(worker, request));
}

/**
 * One sentence explaining why no worker can take the instance, for the `NO_WORKER` event,
 * e.g. `no eligible worker among 3 (tags: etl): 2 without the tags, 1 draining`.
 */
export function explainNoWorker(workers: readonly WorkerSnapshot[], request: RouteRequest): string {
  const tags = request.tags.length > 0 ? ` (tags: ${request.tags.join(', ')})` : '';
  if (workers.length === 0) return `no eligible worker: no worker is registered${tags}`;
  const counts = new Map<Ineligibility, number>();
  for (const worker of workers) {
    const why = ineligibility(worker, request);
    if (why !== null) counts.set(why, (counts.get(why) ?? 0) + 1);
  }
  const words: Record<Ineligibility, string> = {
    OTHER_TEAMS: `not serving team ${request.team ?? ''}`,
    MISSING_TAGS: 'without the tags',
    NO_FREE_SLOT: 'without a free slot',
    DRAINING: 'draining',
    EXCLUDED: 'excluded',
  };
  const order: Ineligibility[] = ['OTHER_TEAMS', 'MISSING_TAGS', 'NO_FREE_SLOT', 'DRAINING', 'EXCLUDED'];
  const parts = order.filter((why) => counts.has(why)).map((why) => `${counts.get(why)} ${words[why]}`);
  return `no eligible worker among ${workers.length}${tags}: ${parts.join(', ')}`;
}

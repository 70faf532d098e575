/**
 * The worker registry in Redis (DESIGN §5, R14): each worker keeps one entry, refreshed with
 * every heartbeat and expiring after the lease TTL, that lists the executions it runs. That
 * list is the lease: a broker declares an execution lost only when the entry is gone or no
 * longer lists it. Workers write their own entry; brokers and admin-api read.
 *
 * Layout: `<ns>:worker:<id>` holds the JSON of {@link WorkerRegistration} with a PX TTL;
 * `<ns>:workers` is the set of ids of workers of no enrollment, `<ns>:workers:<enrollment id>`
 * the set of one enrollment's worker ids (its Redis user may write only that set and its own
 * workers' entries, R24), and `<ns>:enrollments` the set of live enrollment ids, which admin-api
 * keeps (sets are pruned by readers when an entry has expired);
 * `<ns>:drain:<id>` marks a worker drained by an operator (the worker reports it back as
 * `draining`, and routers treat either as "no new work"). The mark holds the `startedAt` of the
 * process it drained, so a drain ends with that process (ADMIN-API "Workers": a restarted worker
 * of the same id is not drained); `1`, written by admin-api before that rule, drains whatever
 * process holds the id until it is undrained.
 */
import { enrollmentOfWorkerId, type HeartbeatMessage } from '@ax/core';
import type { Redis, RedisKeys } from '@ax/kit';

/**
 * A worker's registry entry: its last heartbeat, minus the message envelope, plus the teams it
 * serves (`AX_WORKER_TEAMS`). `teams` empty or absent = every team: entries written by workers
 * from before teams carry none and keep receiving everything.
 */
export type WorkerRegistration = Omit<HeartbeatMessage, 'v' | 'kind'> & {
  /** Teams whose work the worker takes; empty or absent = every team. */
  readonly teams?: readonly string[];
};

/** Writes (or refreshes) a worker's entry with a TTL of `ttlMs` (the lease TTL, 15 s by default). */
export async function publishRegistration(
  redis: Redis,
  keys: RedisKeys,
  registration: WorkerRegistration,
  ttlMs: number,
): Promise<void> {
  await redis
    .multi()
    .set(keys.worker(registration.workerId), JSON.stringify(registration), 'PX', ttlMs)
    .sadd(workerSetOf(keys, registration.workerId), registration.workerId)
    .exec();
}

/** The set that lists a worker: its enrollment's, or the one of unenrolled workers. */
export function workerSetOf(keys: RedisKeys, workerId: string): string {
  const enrollment = enrollmentOfWorkerId(workerId);
  return enrollment === null ? keys.workers : keys.enrollmentWorkers(enrollment);
}

/** Removes a worker's entry at once (deregistration on SIGTERM, or leaving on clock skew). */
export async function removeRegistration(redis: Redis, keys: RedisKeys, workerId: string): Promise<void> {
  await redis.multi().del(keys.worker(workerId)).srem(workerSetOf(keys, workerId), workerId).exec();
}

/** One worker's entry, or null when it has expired or never existed. */
export async function readRegistration(redis: Redis, keys: RedisKeys, workerId: string): Promise<WorkerRegistration | null> {
  const [raw, mark] = await Promise.all([redis.get(keys.worker(workerId)), redis.get(keys.drain(workerId))]);
  return raw === null ? null : withDrain(parseRegistration(raw), mark);
}

/**
 * Every live worker, sorted by id. Ids whose entry has expired are removed from the set; an
 * entry that does not parse is skipped (a newer worker version may write fields we ignore, but
 * never a shape we cannot read without changing the protocol version).
 */
export async function readRegistry(redis: Redis, keys: RedisKeys): Promise<WorkerRegistration[]> {
  const enrollments = (await redis.smembers(keys.enrollments)).sort();
  const sets = [keys.workers, ...enrollments.map((e) => keys.enrollmentWorkers(e))];
  const listed = sets.length === 1 ? [[null, await redis.smembers(keys.workers)]] : ((await sets.reduce((p, set) => p.smembers(set), redis.pipeline()).exec()) ?? []);
  const members: Array<{ id: string; set: string }> = [];
  listed.forEach((reply, i) => {
    for (const id of (reply?.[1] ?? []) as string[]) members.push({ id, set: sets[i] as string });
  });
  members.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  if (members.length === 0) return [];
  const pipeline = redis.pipeline();
  pipeline.mget(members.map((m) => keys.worker(m.id)));
  pipeline.mget(members.map((m) => keys.drain(m.id)));
  const replies = (await pipeline.exec()) ?? [];
  const raws = (replies[0]?.[1] ?? []) as Array<string | null>;
  const marks = (replies[1]?.[1] ?? []) as Array<string | null>;
  const live: WorkerRegistration[] = [];
  const gone = redis.pipeline();
  let pruned = 0;
  members.forEach((m, i) => {
    const raw = raws[i];
    if (raw == null) {
      gone.srem(m.set, m.id);
      pruned++;
      return;
    }
    const registration = parseRegistration(raw);
    // An entry is believed only from the set its id belongs in: an enrolled worker id listed in
    // the set of unenrolled workers (or of another enrollment) was not written by its enrollment.
    if (registration && registration.workerId === m.id && workerSetOf(keys, m.id) === m.set) {
      live.push(withDrain(registration, marks[i] ?? null) as WorkerRegistration);
    }
  });
  if (pruned > 0) await gone.exec();
  return live;
}

/**
 * Marks the process that now holds `workerId` drained (no new work is routed to it; `startedAt`
 * is that process's, from its registry entry), or, with `null`, undrains the id.
 */
export async function setDrained(redis: Redis, keys: RedisKeys, workerId: string, startedAt: string | null): Promise<void> {
  if (startedAt !== null) await redis.set(keys.drain(workerId), startedAt);
  else await redis.del(keys.drain(workerId));
}

/** True when an operator drained this process (`startedAt`: the process's start, as in its entry). */
export async function isDrained(redis: Redis, keys: RedisKeys, workerId: string, startedAt: string): Promise<boolean> {
  return drainHolds(await redis.get(keys.drain(workerId)), startedAt);
}

/** Whether a drain mark applies to the process that started at `startedAt` (see the layout above). */
export function drainHolds(mark: string | null, startedAt: string | undefined): boolean {
  return mark !== null && (mark === LEGACY_DRAIN_MARK || mark === startedAt);
}

/** The mark of admin-api versions before drains ended with their process. */
const LEGACY_DRAIN_MARK = '1';

function isReserve(value: unknown): boolean {
  const r = value as { slots?: unknown; minPriority?: unknown } | null;
  return typeof r === 'object' && r !== null && Number.isInteger(r.slots) && (r.slots as number) >= 1 && Number.isInteger(r.minPriority) && (r.minPriority as number) >= 0 && (r.minPriority as number) <= 9;
}

function parseRegistration(raw: string): WorkerRegistration | null {
  try {
    const value = JSON.parse(raw) as unknown;
    if (typeof value !== 'object' || value === null) return null;
    const r = value as Partial<WorkerRegistration>;
    if (typeof r.workerId !== 'string' || !Array.isArray(r.runningExecutionIds) || !Array.isArray(r.tags)) return null;
    // A `teams` that is not a list of names is unreadable, not "every team": routing to such a
    // worker could hand one team's work to a machine meant for another.
    if (r.teams !== undefined && !(Array.isArray(r.teams) && r.teams.every((t) => typeof t === 'string'))) return null;
    // A reserve that does not read as one is dropped: the worker then lends every slot to all.
    if (r.reservedSlots !== undefined && !isReserve(r.reservedSlots)) {
      const { reservedSlots: _dropped, ...rest } = value as WorkerRegistration;
      return rest;
    }
    return value as WorkerRegistration;
  } catch {
    // A corrupt entry is treated like a missing one; the worker rewrites it within 5 s.
    return null;
  }
}

function withDrain(registration: WorkerRegistration | null, mark: string | null): WorkerRegistration | null {
  if (registration === null) return null;
  return drainHolds(mark, registration.startedAt) ? { ...registration, draining: true } : registration;
}

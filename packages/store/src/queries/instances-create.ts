/**
 * Creating scheduled instances (DESIGN §3, R1–R4) and the scheduler's per-task bookkeeping
 * (watermark `last_fire_time`, `next_fire_time`, misfire counters).
 *
 * - Slots are inserted in batches with `INSERT IGNORE … SELECT … FROM task t JOIN (<slots>) s
 *   ON t.id = s.task_id WHERE t.version = s.version AND t.enabled = 1` (R3): a scheduler holding
 *   a stale definition (edited or disabled meanwhile) inserts nothing; the unique
 *   `(task_name, expected_time)` makes a repeat a no-op (R1, R2).
 * - `block: serial` slots (R4) lock their task rows `FOR UPDATE` (in id order) and are created
 *   only when the task has no *waiting* instance — one in `WAITING`, `PENDING` or `RETRY_WAIT`
 *   (each of those will still start a run; `DISPATCHED`/`RUNNING` are running, not waiting).
 *   `block: {"queue": N}` slots likewise, while fewer than N wait (`maxWaiting`).
 *   Otherwise the slot is coalesced: `coalesced_count + 1`, a `COALESCED` event on the waiting
 *   instance, and the watermark moves over the slot (a coalesced slot is decided, not missing).
 * - `CREATED` events are appended in the same transaction. Which rows this call created is told
 *   by the absence of a `CREATED` event: every creator writes it in the transaction that inserts
 *   the row, and an `INSERT IGNORE` that met another transaction's row waited for its commit.
 */
import type { ResultSetHeader, RowDataPacket } from 'mysql2';
import type { PoolConnection } from 'mysql2/promise';
import type { InstanceState } from '@ax/core';
import { appendEvents, type NewEvent } from './events.js';
import type { Queryable } from '../schema-version.js';

/** States in which an instance of a `serial` task counts as waiting (R4). */
export const SERIAL_WAITING_STATES: readonly InstanceState[] = ['WAITING', 'PENDING', 'RETRY_WAIT'];

/** Rows per INSERT statement. */
export const SLOT_INSERT_CHUNK = 500;

/**
 * Names per `task_name IN (...)` list of a read: MariaDB plans each list as ranges of one index,
 * and one list of every task's name grew with the tasks (100,000 on the bench's history).
 */
export const NAMES_PER_IN_LIST = 500;

/** One slot to create. */
export interface SlotToCreate {
  readonly taskId: string;
  readonly taskName: string;
  /** The definition version the caller computed the slot from (R3). */
  readonly version: number;
  /** Epoch ms of the slot (R1). */
  readonly expectedMs: number;
  /**
   * Epoch ms of `due_at`: the slot plus the task's stable jitter offset (`jitterSeconds`).
   * Default `expectedMs`.
   */
  readonly dueMs?: number;
  /** `YYYY-MM-DD` (bizDateOf with the task's zone and offset). */
  readonly bizDate: string;
  readonly trigger: 'schedule' | 'dependency';
  /** `PENDING`, or `WAITING` for a task with DAG parents. */
  readonly state: 'PENDING' | 'WAITING';
  /** `retry.max + 1`. */
  readonly maxAttempts: number;
  /** Creation is subject to the `serial` / `{queue: N}` check (R4). */
  readonly serial: boolean;
  /**
   * With `serial`: how many instances of the task may wait (WAITING, PENDING, RETRY_WAIT)
   * before a further fire is coalesced: 1 for `serial` (the default), N for `{queue: N}`.
   * `serial` coalesces into the oldest waiting instance, a queue into the newest.
   */
  readonly maxWaiting?: number;
  /**
   * The rerun or backfill batch the slot belongs to: a dependency-only child created for a
   * parent's run of that batch (#47), so the batch counts it and its cancel reaches it.
   */
  readonly rerunBatchId?: string | null;
  /**
   * The run's W3C `traceparent` (#48: the scheduler's fire span); absent: NULL, and the broker
   * gives the run one at its first dispatch.
   */
  readonly traceParent?: string;
}

/** What happened to one slot. */
export type SlotOutcome =
  /** This call inserted its row. */
  | { kind: 'created'; instanceId: string }
  /** Its row was there already (another scheduler, a re-scan). */
  | { kind: 'existed'; instanceId: string }
  /** `serial`: folded into the waiting instance `intoInstanceId`. */
  | { kind: 'coalesced'; intoInstanceId: string }
  /** Not created: the task is gone, disabled or at another version (R3). */
  | { kind: 'refused' };

/** Key of a slot in result maps: `<taskName>@<expectedMs>`. */
export function slotKey(taskName: string, expectedMs: number): string {
  return `${taskName}@${expectedMs}`;
}

type SlotRow = RowDataPacket & { id: string; task_name: string; expected_time: Date; has_created: number };

/**
 * Rows of the given slots (that exist), and whether each has its CREATED event. With
 * `allNew` (the insert affected every slot) the event check is skipped: all rows are ours.
 */
async function readSlots(
  db: Queryable,
  slots: readonly SlotToCreate[],
  allNew = false,
): Promise<Map<string, { id: string; hasCreated: boolean }>> {
  const out = new Map<string, { id: string; hasCreated: boolean }>();
  if (slots.length === 0) return out;
  const derived = slots.map(() => 'SELECT ? AS n, ? AS e').join(' UNION ALL ');
  const hasCreated = allNew ? '0' : "EXISTS (SELECT 1 FROM event_log ev WHERE ev.instance_id = i.id AND ev.type = 'CREATED')";
  const [rows] = await db.query<SlotRow[]>(
    `SELECT i.id, i.task_name, i.expected_time, ${hasCreated} AS has_created
       FROM (${derived}) s JOIN task_instance i ON i.task_name = s.n AND i.expected_time = s.e`,
    slots.flatMap((s) => [s.taskName, new Date(s.expectedMs)]),
  );
  for (const r of rows) out.set(slotKey(r.task_name, r.expected_time.getTime()), { id: String(r.id), hasCreated: Number(r.has_created) === 1 });
  return out;
}

/** The guarded multi-row insert (R3). Returns the rows inserted. */
async function insertGuarded(db: Queryable, slots: readonly SlotToCreate[]): Promise<number> {
  if (slots.length === 0) return 0;
  const derived = slots
    .map(() => 'SELECT ? AS task_id, ? AS version, ? AS expected_time, ? AS due_at, ? AS biz_date, ? AS trg, ? AS state, ? AS max_attempts, ? AS rerun_batch_id, ? AS trace_parent')
    .join(' UNION ALL ');
  const [result] = await db.query<ResultSetHeader>(
    `INSERT IGNORE INTO task_instance
       (task_id, task_name, team, task_version, expected_time, run_no, biz_date, \`trigger\`, state, attempt, max_attempts, due_at, params, priority, rerun_batch_id, trace_parent)
     SELECT t.id, t.name, t.team, t.version, s.expected_time, 1, s.biz_date, s.trg, s.state, 1, s.max_attempts, s.due_at, t.params, t.priority, s.rerun_batch_id, s.trace_parent
       FROM task t JOIN (${derived}) s ON t.id = s.task_id
      WHERE t.version = s.version AND t.enabled = 1`,
    slots.flatMap((s) => [s.taskId, s.version, new Date(s.expectedMs), new Date(s.dueMs ?? s.expectedMs), s.bizDate, s.trigger, s.state, s.maxAttempts, s.rerunBatchId ?? null, s.traceParent ?? null]),
  );
  return result.affectedRows;
}

/**
 * Creates `slots` on `conn`, which must be inside a transaction (see `withTransaction`):
 * serial checks, guarded batched inserts, `CREATED`/`COALESCED` events, coalesced counters.
 * Returns the outcome of every slot by {@link slotKey}.
 */
export async function createSlotInstances(
  conn: PoolConnection | Queryable,
  slots: readonly SlotToCreate[],
): Promise<Map<string, SlotOutcome>> {
  const outcomes = new Map<string, SlotOutcome>();
  if (slots.length === 0) return outcomes;
  const plain: SlotToCreate[] = [];
  const serial = slots.filter((s) => s.serial);
  for (const s of slots) if (!s.serial) plain.push(s);

  const events: NewEvent[] = [];
  /** Serial slots to coalesce: slot key → the waiting instance id, or the key of a slot created in this batch. */
  const coalesceInto = new Map<string, { slot: SlotToCreate; into: { instanceId: string } | { slotKey: string } }>();
  if (serial.length > 0) {
    // Lock the task rows in id order (no deadlock between schedulers), then decide per task.
    const ids = [...new Set(serial.map((s) => s.taskId))].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));
    const [locked] = await conn.query<Array<RowDataPacket & { id: string; version: number; enabled: number }>>(
      'SELECT id, version, enabled FROM task WHERE id IN (?) ORDER BY id FOR UPDATE',
      [ids],
    );
    const current = new Map(locked.map((t) => [String(t.id), { version: Number(t.version), enabled: Number(t.enabled) === 1 }]));
    const names = [...new Set(serial.map((s) => s.taskName))];
    const [waiting] = await conn.query<Array<RowDataPacket & { task_name: string; first_id: string; last_id: string; n: number }>>(
      `SELECT task_name, MIN(id) AS first_id, MAX(id) AS last_id, COUNT(*) AS n FROM task_instance
        WHERE task_name IN (?) AND state IN (?) GROUP BY task_name`,
      [names, SERIAL_WAITING_STATES],
    );
    const queued = new Set(serial.filter((s) => (s.maxWaiting ?? 1) > 1).map((s) => s.taskName));
    /** Per task: how many wait now, and the instance (or slot of this batch) a further fire folds into. */
    const waitingBy = new Map<string, { count: number; into: { instanceId: string } | { slotKey: string } }>(
      waiting.map((w) => [w.task_name, { count: Number(w.n), into: { instanceId: String(queued.has(w.task_name) ? w.last_id : w.first_id) } }]),
    );
    const existing = await readSlots(conn, serial);
    for (const s of [...serial].sort((a, b) => a.expectedMs - b.expectedMs)) {
      const key = slotKey(s.taskName, s.expectedMs);
      const row = existing.get(key);
      const task = current.get(s.taskId);
      if (row !== undefined) {
        outcomes.set(key, { kind: 'existed', instanceId: row.id });
      } else if (task === undefined || task.version !== s.version || !task.enabled) {
        outcomes.set(key, { kind: 'refused' }); // R3, before the waiting check
      } else {
        const w = waitingBy.get(s.taskName);
        const max = s.maxWaiting ?? 1;
        if (w === undefined || w.count < max) {
          plain.push(s);
          // Later slots of the same task in this batch wait behind the ones created now: a
          // serial task's first waiting instance stays the one to fold into, a queue's newest.
          const into = w === undefined || max > 1 ? { slotKey: key } : w.into;
          waitingBy.set(s.taskName, { count: (w?.count ?? 0) + 1, into });
        } else {
          coalesceInto.set(key, { slot: s, into: w.into });
        }
      }
    }
  }

  for (let i = 0; i < plain.length; i += SLOT_INSERT_CHUNK) {
    const chunk = plain.slice(i, i + SLOT_INSERT_CHUNK);
    const inserted = await insertGuarded(conn, chunk);
    const rows = await readSlots(conn, chunk, inserted === chunk.length);
    for (const s of chunk) {
      const key = slotKey(s.taskName, s.expectedMs);
      const row = rows.get(key);
      if (row === undefined) outcomes.set(key, { kind: 'refused' });
      else if (row.hasCreated) outcomes.set(key, { kind: 'existed', instanceId: row.id });
      else {
        outcomes.set(key, { kind: 'created', instanceId: row.id });
        events.push({
          instanceId: row.id,
          type: 'CREATED',
          data: {
            trigger: s.trigger,
            expectedTime: new Date(s.expectedMs).toISOString(),
            state: s.state,
            ...(s.dueMs !== undefined && s.dueMs !== s.expectedMs ? { dueAt: new Date(s.dueMs).toISOString(), jitterMs: s.dueMs - s.expectedMs } : {}),
          },
        });
      }
    }
  }
  // Serial coalescing, now that the instances created in this batch are known.
  const coalesced = new Map<string, { taskId: string; count: number; maxMs: number }>();
  for (const [key, { slot, into }] of coalesceInto) {
    let target: string | null;
    if ('instanceId' in into) target = into.instanceId;
    else {
      const created = outcomes.get(into.slotKey);
      target = created !== undefined && (created.kind === 'created' || created.kind === 'existed') ? created.instanceId : null;
    }
    if (target === null) {
      outcomes.set(key, { kind: 'refused' });
      continue;
    }
    outcomes.set(key, { kind: 'coalesced', intoInstanceId: target });
    const at = new Date(slot.expectedMs).toISOString();
    const why = (slot.maxWaiting ?? 1) > 1 ? `block queue: ${slot.maxWaiting} waiting` : 'block serial';
    events.push({ instanceId: target, type: 'COALESCED', message: `slot ${at} coalesced (${why})`, data: { expectedTime: at } });
    const c = coalesced.get(slot.taskName) ?? { taskId: slot.taskId, count: 0, maxMs: 0 };
    c.count += 1;
    c.maxMs = Math.max(c.maxMs, slot.expectedMs);
    coalesced.set(slot.taskName, c);
  }
  for (const c of coalesced.values()) {
    // A coalesced slot is decided: the watermark moves over it.
    await conn.query(
      `UPDATE task SET coalesced_count = coalesced_count + ?,
              last_fire_time = CASE WHEN last_fire_time IS NULL OR last_fire_time < ? THEN ? ELSE last_fire_time END
        WHERE id = ?`,
      [c.count, new Date(c.maxMs), new Date(c.maxMs), c.taskId],
    );
  }
  for (let i = 0; i < events.length; i += SLOT_INSERT_CHUNK) await appendEvents(conn, events.slice(i, i + SLOT_INSERT_CHUNK));
  return outcomes;
}

/** A range of slots of one task: `(afterMs, untilMs]`. */
export interface SlotRange {
  readonly taskName: string;
  readonly afterMs: number;
  readonly untilMs: number;
}

/** Disjuncts per statement of ranges whose bounds no other range shares (see existingSlotTimes). */
const LONE_RANGES_PER_QUERY = 25;

/**
 * The expected times (epoch ms) of existing instances in each range, ascending, by task name.
 *
 * Every range is read as a range of uk_instance_slot (task_name, expected_time): ranges with the
 * same bounds (the tasks of one schedule: one watermark, and every range ends at the same now)
 * as `task_name IN (...)` between constants, up to NAMES_PER_IN_LIST names a statement; a range
 * whose bounds no other shares as one of up to LONE_RANGES_PER_QUERY disjuncts of constants.
 * Two forms that cost more than they read, both seen in the soak of 2026-12-03: a join against
 * the ranges as a derived table bounds only task_name by the index, so it read every instance a
 * task ever had (3,600 more an hour for a task firing every second); 500 disjuncts in one
 * statement cost MariaDB's range optimizer seconds before it read a row.
 */
export async function existingSlotTimes(db: Queryable, ranges: readonly SlotRange[]): Promise<Map<string, number[]>> {
  const byBounds = new Map<string, { afterMs: number; untilMs: number; names: string[] }>();
  for (const r of ranges) {
    if (r.untilMs <= r.afterMs) continue;
    const key = `${r.afterMs}:${r.untilMs}`;
    const group = byBounds.get(key);
    if (group === undefined) byBounds.set(key, { afterMs: r.afterMs, untilMs: r.untilMs, names: [r.taskName] });
    else group.names.push(r.taskName);
  }
  const out = new Map<string, number[]>();
  const read = async (where: string, values: unknown[]): Promise<void> => {
    const [rows] = await db.query<Array<RowDataPacket & { task_name: string; expected_time: Date }>>(
      `SELECT task_name, expected_time FROM task_instance WHERE ${where} ORDER BY task_name, expected_time`,
      values,
    );
    for (const r of rows) {
      const list = out.get(r.task_name);
      if (list === undefined) out.set(r.task_name, [r.expected_time.getTime()]);
      else list.push(r.expected_time.getTime());
    }
  };
  const lone: SlotRange[] = [];
  for (const g of byBounds.values()) {
    if (g.names.length === 1) {
      lone.push({ taskName: g.names[0]!, afterMs: g.afterMs, untilMs: g.untilMs });
      continue;
    }
    for (let i = 0; i < g.names.length; i += NAMES_PER_IN_LIST) {
      await read('task_name IN (?) AND expected_time > ? AND expected_time <= ?', [g.names.slice(i, i + NAMES_PER_IN_LIST), new Date(g.afterMs), new Date(g.untilMs)]);
    }
  }
  for (let i = 0; i < lone.length; i += LONE_RANGES_PER_QUERY) {
    const chunk = lone.slice(i, i + LONE_RANGES_PER_QUERY);
    await read(
      chunk.map(() => '(task_name = ? AND expected_time > ? AND expected_time <= ?)').join(' OR '),
      chunk.flatMap((r) => [r.taskName, new Date(r.afterMs), new Date(r.untilMs)]),
    );
  }
  return out;
}

/** One watermark move. */
export interface WatermarkMove {
  readonly taskId: string;
  /** New watermark, epoch ms; null leaves it (only `next_fire_time` changes). */
  readonly toMs: number | null;
  /** New `next_fire_time` (epoch ms), or null when the schedule has no further fire. */
  readonly nextFireMs: number | null;
}

/**
 * Moves watermarks forward (never back: a conditional `GREATEST`), and sets `next_fire_time`,
 * in one statement per chunk. Watermark moves do not touch `version` or `updated_at`.
 */
export async function advanceWatermarks(db: Queryable, moves: readonly WatermarkMove[]): Promise<void> {
  for (let i = 0; i < moves.length; i += SLOT_INSERT_CHUNK) {
    const chunk = moves.slice(i, i + SLOT_INSERT_CHUNK);
    if (chunk.length === 0) continue;
    const derived = chunk.map(() => 'SELECT ? AS id, ? AS w, ? AS nf').join(' UNION ALL ');
    await db.query(
      `UPDATE task t JOIN (${derived}) s ON t.id = s.id
          SET t.last_fire_time = CASE WHEN s.w IS NOT NULL AND (t.last_fire_time IS NULL OR t.last_fire_time < s.w)
                                      THEN s.w ELSE t.last_fire_time END,
              t.next_fire_time = s.nf`,
      chunk.flatMap((m) => [m.taskId, m.toMs === null ? null : new Date(m.toMs), m.nextFireMs === null ? null : new Date(m.nextFireMs)]),
    );
  }
}

/**
 * Records a misfire decision over `(fromMs, toMs]` of one task, as one conditional write: only
 * when the watermark is still `fromMs` (null = never fired), so two schedulers starting at once
 * decide a gap once. Returns whether this call won the decision.
 */
export async function recordMisfireDecision(
  db: Queryable,
  d: { taskId: string; fromMs: number | null; toMs: number; skipped: number; coalesced: number },
): Promise<boolean> {
  const [result] = await db.query<ResultSetHeader>(
    `UPDATE task SET last_fire_time = ?, skipped_count = skipped_count + ?, coalesced_count = coalesced_count + ?
      WHERE id = ? AND last_fire_time <=> ?`,
    [new Date(d.toMs), d.skipped, d.coalesced, d.taskId, d.fromMs === null ? null : new Date(d.fromMs)],
  );
  return result.affectedRows === 1;
}

/**
 * The scheduler's copy of the task definitions with their compiled schedules and DAG parents.
 * Reloaded in full periodically (fallback) and per task on `<ns>:task-changed`.
 */
import { compileSchedule, excludeCalendarDates, type CalendarDates, type CompiledSchedule, type EdgeRule, type TaskDefinition } from '@ax/core';
import { getCalendars, getTask, listSchedulerEdges, listTasks, taskHeadPages, type CalendarRecord, type Queryable, type TaskRecord } from '@ax/store';
import type { Logger } from '@ax/kit';
import { schedulingFieldsOf, type SchedulingFields } from './scheduling-fields.js';

/** One cached task. */
export interface CachedTask {
  readonly id: string;
  readonly name: string;
  readonly version: number;
  /** The fields of the definition the scheduler reads (scheduling-fields.ts), not the whole of it. */
  readonly definition: SchedulingFields;
  /**
   * The fires of the task: its schedule without the dates of its calendar. Null when the
   * schedule could not be compiled (logged once).
   */
  readonly compiled: CompiledSchedule | null;
  /** The schedule's own fires, calendar dates included (to tell skipped fires apart). */
  readonly raw: CompiledSchedule | null;
  /** The task's calendar as read with the definition (its version moves with every calendar change), or null. */
  readonly calendar: (CalendarDates & { readonly name: string }) | null;
  readonly createdAtMs: number;
  /**
   * Parents (`task_edge`) with their rules, and whether each may create this task's instances
   * when it has no schedule (`createsChild`: same team, or the edge allowed between the two
   * tasks' teams; #44, docs/teams.md).
   */
  readonly parents: ReadonlyArray<ParentEdge>;
}

/** One parent of a cached task. */
export interface ParentEdge {
  readonly parent: string;
  readonly rule: EdgeRule;
  readonly createsChild: boolean;
}

export class TaskCache {
  readonly #tasks = new Map<string, CachedTask>();
  readonly #children = new Map<string, string[]>();
  readonly #logger: Logger;
  /** Per `reloadAll` in progress: the names `reloadOne` read meanwhile. */
  readonly #loadedMeanwhile = new Set<Set<string>>();

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  #generation = 0;

  get size(): number {
    return this.#tasks.size;
  }

  /** Moves on whenever a task is added, replaced or removed (callers skip work while it stays). */
  get generation(): number {
    return this.#generation;
  }

  get(name: string): CachedTask | undefined {
    return this.#tasks.get(name);
  }

  all(): IterableIterator<CachedTask> {
    return this.#tasks.values();
  }

  /** Names of the tasks that have `name` as a parent. */
  childrenOf(name: string): readonly string[] {
    return this.#children.get(name) ?? [];
  }

  /**
   * Re-reads everything: the ids and versions of all tasks (keyset pages of 5,000 names: one
   * statement held 100,000 rows at once every resync, #24), then the full rows (parsed and
   * compiled) only of those that are new or changed, 1,000 at a time with a yield to the event
   * loop in between, so a resync of 10,000 tasks does not stall the fire loop. Returns the
   * names that changed, appeared or disappeared.
   *
   * A task that `reloadOne` loads meanwhile (its `task-changed` came during the pass) is not
   * dropped for missing from pages read before it was created, and a row read before a newer
   * version that `reloadOne` already holds does not replace it.
   */
  async reloadAll(db: Queryable): Promise<string[]> {
    const loadedMeanwhile = new Set<string>();
    this.#loadedMeanwhile.add(loadedMeanwhile);
    try {
      return await this.#reloadAll(db, loadedMeanwhile);
    } finally {
      this.#loadedMeanwhile.delete(loadedMeanwhile);
    }
  }

  async #reloadAll(db: Queryable, loadedMeanwhile: ReadonlySet<string>): Promise<string[]> {
    const edges = await listSchedulerEdges(db);
    const parents = new Map<string, ParentEdge[]>();
    this.#children.clear();
    for (const e of edges) {
      const list = parents.get(e.child) ?? [];
      list.push({ parent: e.parent, rule: e.rule, createsChild: e.createsChild });
      parents.set(e.child, list);
      const kids = this.#children.get(e.parent) ?? [];
      kids.push(e.child);
      this.#children.set(e.parent, kids);
    }
    const changed: string[] = [];
    const seen = new Set<string>();
    for await (const heads of taskHeadPages(db)) {
      for (const h of heads) {
        seen.add(h.name);
        const before = this.#tasks.get(h.name);
        if (before === undefined || before.version !== Number(h.version) || before.id !== String(h.id)) changed.push(h.name);
        else {
          const p = parents.get(h.name) ?? [];
          if (!sameParents(before.parents, p)) this.#setTask(h.name, { ...before, parents: p });
        }
      }
    }
    for (let i = 0; i < changed.length; i += 1_000) {
      const records = await listTasks(db, { names: changed.slice(i, i + 1_000), memo: false });
      const calendars = await getCalendars(db, records.flatMap((r) => (r.definition.calendar === null ? [] : [r.definition.calendar])));
      for (const r of records) {
        const now = this.#tasks.get(r.definition.name);
        if (now !== undefined && now.id === r.id && now.version > r.version) continue; // reloadOne read a newer one meanwhile
        this.#setTask(r.definition.name, this.#build(r, parents.get(r.definition.name) ?? [], calendars));
      }
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    // A Map may lose entries while it is iterated.
    for (const name of this.#tasks.keys()) {
      if (!seen.has(name) && !loadedMeanwhile.has(name)) {
        this.#deleteTask(name);
        changed.push(name);
      }
    }
    return changed;
  }

  /** Re-reads one task (after a `task-changed` message). Returns whether its version changed. */
  async reloadOne(db: Queryable, name: string): Promise<boolean> {
    for (const meanwhile of this.#loadedMeanwhile) meanwhile.add(name);
    const [record, edges] = await Promise.all([getTask(db, name), listSchedulerEdges(db)]);
    const before = this.#tasks.get(name);
    if (record === null) {
      this.#deleteTask(name);
      return before !== undefined;
    }
    const parentsOf = (child: string): ParentEdge[] => edges.filter((e) => e.child === child).map((e) => ({ parent: e.parent, rule: e.rule, createsChild: e.createsChild }));
    const p = parentsOf(name);
    // A task that moved to another team changes what its edges to its children allow.
    for (const e of edges) {
      if (e.parent !== name) continue;
      const child = this.#tasks.get(e.child);
      const now = parentsOf(e.child);
      if (child !== undefined && !sameParents(child.parents, now)) this.#setTask(e.child, { ...child, parents: now });
    }
    this.#children.clear();
    for (const e of edges) {
      const kids = this.#children.get(e.parent) ?? [];
      kids.push(e.child);
      this.#children.set(e.parent, kids);
    }
    const calendars = record.definition.calendar === null ? new Map<string, CalendarRecord>() : await getCalendars(db, [record.definition.calendar]);
    this.#setTask(name, this.#build(record, p, calendars));
    return before === undefined || before.version !== record.version || before.id !== record.id;
  }

  #setTask(name: string, task: CachedTask): void {
    this.#tasks.set(name, task);
    this.#generation += 1;
  }

  #deleteTask(name: string): void {
    if (this.#tasks.delete(name)) this.#generation += 1;
  }

  #build(r: TaskRecord, parents: ReadonlyArray<ParentEdge>, calendars: ReadonlyMap<string, CalendarRecord>): CachedTask {
    const definition = schedulingFieldsOf(r.definition);
    let raw: CompiledSchedule | null = null;
    try {
      raw = compiledScheduleOf(definition.schedule, r.createdAt.getTime());
    } catch (error) {
      this.#logger.error({ err: error, taskName: r.definition.name }, 'task schedule does not compile; task not scheduled');
    }
    let calendar: CachedTask['calendar'] = null;
    const name = r.definition.calendar;
    if (name !== null) {
      const c = calendars.get(name);
      // A task may only name a calendar of its own team (the admin API checks it at write).
      if (c === undefined || c.team !== r.definition.team) {
        this.#logger.error({ taskName: r.definition.name, calendar: name }, 'task names a calendar of its team that does not exist; no dates excluded');
      } else {
        calendar = { name, timezone: c.timezone, dates: new Set(c.dates) };
      }
    }
    return {
      id: r.id,
      name: r.definition.name,
      version: r.version,
      definition,
      compiled: raw === null || calendar === null ? raw : excludeCalendarDates(raw, calendar),
      raw,
      calendar,
      createdAtMs: r.createdAt.getTime(),
      parents,
    };
  }
}

/**
 * Compiled schedules by interned schedule (scheduling-fields.ts), for the kinds whose fires do not
 * depend on the task's creation time (all but `fixed_rate`): 100,000 tasks on 1,440
 * cron expressions hold 1,440 compiled schedules, not 100,000 (#24). A compiled schedule is
 * stateless, so sharing it changes no answer.
 */
const sharedCompiled = new WeakMap<TaskDefinition['schedule'], CompiledSchedule>();

function compiledScheduleOf(schedule: TaskDefinition['schedule'], anchorMs: number): CompiledSchedule {
  if (schedule.type === 'fixed_rate') return compileSchedule(schedule, { anchorMs }); // its grid may start at the task's creation
  const hit = sharedCompiled.get(schedule);
  if (hit !== undefined) return hit;
  const compiled = compileSchedule(schedule, { anchorMs });
  sharedCompiled.set(schedule, compiled);
  return compiled;
}


function sameParents(a: ReadonlyArray<ParentEdge>, b: ReadonlyArray<ParentEdge>): boolean {
  return a.length === b.length && a.every((x, i) => x.parent === b[i]?.parent && x.rule === b[i]?.rule && x.createsChild === b[i]?.createsChild);
}

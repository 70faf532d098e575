/**
 * `axctl apply`: what applying job files would do to the tasks on the server (pure). Each task
 * of the files is `create` (not on the server), `change` (with the definition fields that
 * differ) or `unchanged`; with prune, each task of the scope that no file names and that carries
 * the source's managed-by marker is `delete`.
 * A file task without `dependsOn` leaves its edges alone, so `dependsOn` is compared only when
 * the file names it.
 */
import { TASK_DEFINITION_FIELDS, canonical, valueDiff, type ValueChange } from '@ax/core';

/** What applying does to one task. */
export interface TaskDiff {
  readonly name: string;
  readonly team: string;
  readonly action: 'create' | 'change' | 'delete' | 'unchanged';
  /** The definition fields that differ (`change`); empty otherwise. */
  readonly fields: readonly string[];
  /** What changes in those fields, value by value (`change`); empty otherwise. */
  readonly changes?: readonly ValueChange[];
}

type Parents = ReadonlyArray<{ task?: unknown; rule?: unknown }>;

/** `dependsOn` in a comparable form: sorted by parent, rule defaulted. */
function parentsKey(value: unknown): string {
  const list = Array.isArray(value) ? (value as Parents) : [];
  return list
    .map((p) => `${String(p.task)}:${typeof p.rule === 'string' ? p.rule : 'ALL_SUCCESS'}`)
    .sort()
    .join(',');
}

/** The definition fields in which `local` (a parsed definition) and `remote` (a task resource) differ. */
export function changedFields(local: Readonly<Record<string, unknown>>, remote: Readonly<Record<string, unknown>>): string[] {
  return TASK_DEFINITION_FIELDS.filter((field) => {
    if (field === 'dependsOn') return local['dependsOn'] !== undefined && parentsKey(local['dependsOn']) !== parentsKey(remote['dependsOn']);
    return canonical(local[field]) !== canonical(remote[field]);
  });
}

/** Options of {@link diffTasks}. */
export interface DiffOptions {
  /** Delete the server's tasks that no file names (of the teams `inScope` answers true for). */
  readonly prune: boolean;
  /** Whether a server task's team is in the scope of prune. Default: every team listed. */
  readonly inScope?: (team: string) => boolean;
  /**
   * The source's marker (`--source`): prune deletes only server tasks that carry it (`managedBy`),
   * never one made elsewhere (the console) (#47).
   */
  readonly managedBy: string;
}

/**
 * The diff of `local` definitions against `remote` resources (the tasks the token sees): one
 * entry per local task in file order, then the deletions by name.
 */
export function diffTasks(local: ReadonlyArray<Readonly<Record<string, unknown>>>, remote: ReadonlyArray<Readonly<Record<string, unknown>>>, opts: DiffOptions): TaskDiff[] {
  const byName = new Map(remote.map((r) => [String(r['name']), r]));
  const out: TaskDiff[] = local.map((def) => {
    const name = String(def['name']);
    const team = String(def['team']);
    const current = byName.get(name);
    if (current === undefined) return { name, team, action: 'create', fields: [] };
    const fields = changedFields(def, current);
    return fields.length === 0 ? { name, team, action: 'unchanged', fields } : { name, team, action: 'change', fields, changes: valueChanges(def, current) };
  });
  if (opts.prune) {
    const named = new Set(local.map((d) => String(d['name'])));
    const inScope = opts.inScope ?? ((): boolean => true);
    const gone = remote.filter((r) => !named.has(String(r['name'])) && inScope(String(r['team'])) && r['managedBy'] === opts.managedBy);
    for (const r of [...gone].sort((a, b) => (String(a['name']) < String(b['name']) ? -1 : 1))) {
      out.push({ name: String(r['name']), team: String(r['team']), action: 'delete', fields: [] });
    }
  }
  return out;
}

/** Counts by action. */
export function summarize(diff: readonly TaskDiff[]): Record<TaskDiff['action'], number> {
  const counts = { create: 0, change: 0, delete: 0, unchanged: 0 };
  for (const d of diff) counts[d.action]++;
  return counts;
}

/** Whether applying changes anything. */
export function hasChanges(diff: readonly TaskDiff[]): boolean {
  return diff.some((d) => d.action !== 'unchanged');
}

/**
 * The values behind {@link changedFields}: each differing leaf with the server's value and the
 * file's (issue #47: the dry run named the fields, not what changes). Values under `env`,
 * `headers` and credential-like keys print as `***`, never their text: a dry run's output goes
 * into CI logs.
 */
export function valueChanges(local: Readonly<Record<string, unknown>>, remote: Readonly<Record<string, unknown>>): ValueChange[] {
  const out: ValueChange[] = [];
  for (const field of changedFields(local, remote)) {
    if (field === 'dependsOn') out.push({ path: field, from: parentsKey(remote[field]) || undefined, to: parentsKey(local[field]) || undefined });
    else out.push(...valueDiff(field, remote[field], local[field]));
  }
  return out;
}

/**
 * Pure logic of the operations pages (#20): instance-list filters kept in the URL, the DAG grid
 * as rows, what a bulk rerun / cancel of a selection would touch.
 */
import type { Instance } from '../types';
import type { DagGrid, GridCell } from './types';

/** The filters of the instance list, as they stand in the URL query (all strings, '' = unset). */
export interface InstanceFilters {
  team: string;
  task: string;
  state: string;
  bizDate: string;
  worker: string;
  trigger: string;
  /** ISO instants (UTC), `expectedTime` at or after / before. */
  from: string;
  to: string;
}

export const INSTANCE_FILTER_KEYS: readonly (keyof InstanceFilters)[] = ['team', 'task', 'state', 'bizDate', 'worker', 'trigger', 'from', 'to'];

/** What created an instance (the resource's `trigger`; a backfill slot is a `rerun`). */
export const TRIGGERS = ['schedule', 'manual', 'dependency', 'rerun'] as const;

/** The filters of a URL query string (`?a=b` or `a=b`). */
export function filtersFromSearch(search: string): InstanceFilters {
  const params = new URLSearchParams(search);
  const out = {} as InstanceFilters;
  for (const key of INSTANCE_FILTER_KEYS) out[key] = (params.get(key) ?? '').trim();
  return out;
}

/** The URL query (without `?`) of these filters, unset ones left out, in a fixed order. */
export function filtersToSearch(filters: Partial<InstanceFilters>): string {
  const params = new URLSearchParams();
  for (const key of INSTANCE_FILTER_KEYS) {
    const value = (filters[key] ?? '').trim();
    if (value !== '') params.set(key, value);
  }
  return params.toString();
}

/** A `datetime-local` input's value read as UTC (`2026-12-01T10:00` → `2026-12-01T10:00:00.000Z`); '' when empty or not a time. */
export function utcInputToIso(value: string): string {
  const text = value.trim();
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$/.test(text)) return '';
  const date = new Date(`${text}Z`);
  return Number.isNaN(date.getTime()) ? '' : date.toISOString();
}

/** An ISO instant as a `datetime-local` value in UTC (`…T10:00:00.000Z` → `2026-12-01T10:00`); '' for anything else. */
export function isoToUtcInput(iso: string): string {
  if (iso === '') return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  const text = date.toISOString();
  return text.endsWith(':00.000Z') ? text.slice(0, 16) : text.slice(0, 19);
}

/** The grid as rows: per task (in the API's order), a cell or null for each business date. */
export function gridRows(grid: DagGrid): Array<{ task: string; cells: Array<GridCell | null> }> {
  const byKey = new Map<string, GridCell>(grid.cells.map((c) => [`${c.task}\n${c.bizDate}`, c]));
  return grid.tasks.map((task) => ({ task, cells: grid.bizDates.map((d) => byKey.get(`${task}\n${d}`) ?? null) }));
}

const FINAL = new Set(['SUCCESS', 'FAILED', 'CANCELED']);

/** Whether an instance is in a final state (a rerun needs one; a cancel needs the opposite). */
export function isFinal(state: string): boolean {
  return FINAL.has(state);
}

/** A selection split into what a bulk action would touch and what it skips, with why. */
export interface BulkSplit {
  act: Instance[];
  skip: Array<{ instance: Instance; why: string }>;
}

/** Rerun: final instances only (the API answers 409 for the others). */
export function splitForRerun(selected: readonly Instance[]): BulkSplit {
  const out: BulkSplit = { act: [], skip: [] };
  for (const i of selected) {
    if (isFinal(i.state)) out.act.push(i);
    else out.skip.push({ instance: i, why: `${i.state}: not final, it cannot be re-run yet` });
  }
  return out;
}

/** Cancel: instances not final yet (a final one has nothing to cancel). */
export function splitForCancel(selected: readonly Instance[]): BulkSplit {
  const out: BulkSplit = { act: [], skip: [] };
  for (const i of selected) {
    if (isFinal(i.state)) out.skip.push({ instance: i, why: `${i.state}: already final` });
    else out.act.push(i);
  }
  return out;
}

/** The selection after toggling one id. */
export function toggled(selected: ReadonlySet<string>, id: string): Set<string> {
  const next = new Set(selected);
  if (next.has(id)) next.delete(id);
  else next.add(id);
  return next;
}

/** The selection after the "all on this page" box: all of `ids` selected unless they all were. */
export function toggledAll(selected: ReadonlySet<string>, ids: readonly string[]): Set<string> {
  const all = ids.length > 0 && ids.every((id) => selected.has(id));
  const next = new Set(selected);
  for (const id of ids) {
    if (all) next.delete(id);
    else next.add(id);
  }
  return next;
}

/** Runs `work` over `items` at most `concurrency` at a time, results in input order (a failure is a result, not a throw). */
export async function eachLimited<T, R>(items: readonly T[], concurrency: number, work: (item: T) => Promise<R>): Promise<Array<{ ok: true; value: R } | { ok: false; error: unknown }>> {
  const results: Array<{ ok: true; value: R } | { ok: false; error: unknown }> = [];
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const index = next++;
      try {
        results[index] = { ok: true, value: await work(items[index] as T) };
      } catch (error) {
        results[index] = { ok: false, error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, items.length)) }, lane));
  return results;
}

/**
 * The form view of a draft: reads and writes the common fields of a definition object, keeping
 * every other field as it is (so switching between the form and the YAML loses nothing).
 */
import type { Draft } from './task-yaml';

/** One parent of `dependsOn`. */
export interface Parent {
  task: string;
  rule: 'ALL_SUCCESS' | 'ALL_DONE';
}

function objectAt(draft: Draft, key: string): Record<string, unknown> {
  const value = draft[key];
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** The value at `path` (`schedule.expr`), or undefined. */
export function getField(draft: Draft, path: string): unknown {
  let node: unknown = draft;
  for (const key of path.split('.')) {
    if (typeof node !== 'object' || node === null || Array.isArray(node)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** A copy of `draft` with `path` set to `value` (undefined removes the field). */
export function setField(draft: Draft, path: string, value: unknown): Draft {
  const [head, ...rest] = path.split('.');
  if (head === undefined) return draft;
  if (rest.length === 0) {
    const { [head]: _old, ...others } = draft;
    return value === undefined ? others : { ...draft, [head]: value };
  }
  return { ...draft, [head]: setField(objectAt(draft, head), rest.join('.'), value) };
}

/** Text of a field for an input ('' for absent). */
export function textOf(draft: Draft, path: string): string {
  const value = getField(draft, path);
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value) ?? '';
}

/** A number input's value: a number when it reads as one, else the text (the API names it). */
export function numberOrText(text: string): number | string | undefined {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  const n = Number(trimmed);
  return Number.isFinite(n) ? n : trimmed;
}

/** Changes the schedule type, keeping the zone; the fields of the other types go. */
export function withScheduleType(draft: Draft, type: string): Draft {
  const old = objectAt(draft, 'schedule');
  const next: Record<string, unknown> = { type };
  if (old['type'] === type) return draft;
  if (type === 'cron') {
    next['expr'] = '0 2 * * *';
    next['timezone'] = old['timezone'] ?? 'UTC';
  } else if (type === 'fixed_rate') next['everySeconds'] = 3600;
  else if (type === 'once') next['at'] = new Date(Date.now() + 3_600_000).toISOString().replace(/\d\d\.\d{3}Z$/, '00.000Z');
  return { ...draft, schedule: next };
}

/** Changes the exec type: its main field starts empty, other exec fields of the old type go. */
export function withExecType(draft: Draft, type: string): Draft {
  const old = objectAt(draft, 'exec');
  if (old['type'] === type) return draft;
  if (type === 'shell') return { ...draft, exec: { type, command: [] } };
  if (type === 'http') return { ...draft, exec: { type, url: '' } };
  return { ...draft, exec: { type } };
}

/** A shell command as the form shows it: one argument per line. */
export function commandText(draft: Draft): string {
  const command = getField(draft, 'exec.command');
  return Array.isArray(command) ? command.map(String).join('\n') : typeof command === 'string' ? command : '';
}

/** Lines of the textarea as argv (a trailing empty line is dropped, inner ones kept). */
export function commandOf(text: string): string[] {
  const lines = text.split('\n');
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Tags from "a, b c" (commas or spaces). */
export function tagsOf(text: string): string[] {
  return text.split(/[\s,]+/).filter((t) => t !== '');
}

/** The parents of `dependsOn` (rule defaulted), or [] when absent. */
export function parentsOf(draft: Draft): Parent[] {
  const deps = draft['dependsOn'];
  if (!Array.isArray(deps)) return [];
  return deps.map((d: unknown) => {
    const { task, rule } = (typeof d === 'object' && d !== null ? d : {}) as { task?: unknown; rule?: unknown };
    return { task: typeof task === 'string' ? task : '', rule: rule === 'ALL_DONE' ? 'ALL_DONE' : 'ALL_SUCCESS' };
  });
}

/** Writes `dependsOn`; the default rule is not written out. */
export function withParents(draft: Draft, parents: readonly Parent[]): Draft {
  return { ...draft, dependsOn: parents.map((p) => (p.rule === 'ALL_SUCCESS' ? { task: p.task } : { task: p.task, rule: p.rule })) };
}

/**
 * The body to send for a draft. On an edit, a task that had parents and whose draft no longer
 * names `dependsOn` sends `dependsOn: []`: the editor showed them, so taking them out of the
 * text removes them (the API would otherwise leave absent edges as they are).
 */
export function bodyOf(draft: Draft, stored: Draft | null, version: number | null): Record<string, unknown> {
  const body: Record<string, unknown> = { ...draft };
  if (stored !== null && Array.isArray(stored['dependsOn']) && stored['dependsOn'].length > 0 && body['dependsOn'] === undefined) body['dependsOn'] = [];
  if (version !== null) body['version'] = version;
  return body;
}

/**
 * The task draft as YAML: the same document `POST /api/v1/tasks/import` and `axctl apply` take
 * (docs/job-files.md). A stored task becomes its definition (resource-only fields dropped), a
 * YAML text becomes a definition object (or one error with its line), and a field path named
 * by the API (`schedule.expr`, `dependsOn[0].task`) is found back on its line of the text.
 */
// A pure module of core with its own export (no zod): core's index holds Node code the browser
// bundle must not take (as DiffView's line-diff).
// eslint-disable-next-line no-restricted-imports
import { DEFAULT_RETRY } from '@ax/core/retry-defaults';
import { isMap, isSeq, LineCounter, parseAllDocuments, parseDocument, stringify, type Node } from 'yaml';

/** The team a task without one belongs to (ADMIN-API.md; @ax/core's DEFAULT_TEAM, which the browser bundle does not import). */
const DEFAULT_TEAM = 'default';

/** A definition being edited: the JSON body of `POST /tasks` / `PUT /tasks/{name}`. */
export type Draft = Record<string, unknown>;

/** Fields of a task resource that are not part of its definition (ADMIN-API.md "Task resource" and extensions). */
export const RESOURCE_ONLY_FIELDS: readonly string[] = [
  'version',
  'createdAt',
  'updatedAt',
  'nextFireTime',
  'lastFireTime',
  'skippedCount',
  'coalescedCount',
  'calendarSkippedCount',
  'pausedReason',
  'lastRun',
];

/** The definition of a task resource, in the resource's field order. */
export function definitionOf(resource: Readonly<Record<string, unknown>>): Draft {
  return Object.fromEntries(Object.entries(resource).filter(([key, value]) => !RESOURCE_ONLY_FIELDS.includes(key) && value !== undefined));
}

/** YAML of a definition, one field per line (as `axctl tasks get -o yaml` prints it). */
export function toYaml(draft: Draft): string {
  return stringify(draft, { lineWidth: 0 });
}

/**
 * A new task's starting document: a daily cron in a named zone, a shell command, in `team` —
 * the token's team when it covers exactly one (issue #47: a team token tripped on `default`,
 * a team it does not cover), else `default`.
 */
export function newTaskYaml(team: string = DEFAULT_TEAM): string {
  return `name: my_task
description: ""
team: ${team}
schedule:
  type: cron
  expr: "0 2 * * *"
  timezone: UTC
exec:
  type: shell
  command: [echo, "hello {{bizDate}}"]
timeoutSeconds: 600
retry:
  max: ${DEFAULT_RETRY.max}
  backoffSeconds: ${DEFAULT_RETRY.backoffSeconds}
tags: []
enabled: true
`;
}

/** The team a new task starts in for a token of `teams`: its only team, else `default`. */
export function newTaskTeam(teams: readonly string[] | undefined): string {
  const only = teams?.length === 1 ? teams[0] : undefined;
  return only === undefined || only === '*' ? DEFAULT_TEAM : only;
}

export type ParsedYaml = { ok: true; value: Draft } | { ok: false; message: string; line?: number };

/** Reads one YAML document holding one task definition (a mapping). */
export function parseDraftYaml(text: string): ParsedYaml {
  const lineCounter = new LineCounter();
  const documents = parseAllDocuments(text, { lineCounter, prettyErrors: false });
  if (!Array.isArray(documents)) return { ok: false, message: 'the YAML is empty: it must hold one task definition' };
  if (documents.length !== 1) return { ok: false, message: `the editor takes one task: the YAML holds ${documents.length} documents (import several with axctl apply)` };
  const doc = documents[0];
  if (doc === undefined) return { ok: false, message: 'the YAML is empty: it must hold one task definition' };
  const problem = doc.errors[0];
  if (problem !== undefined) {
    const line = lineCounter.linePos(problem.pos[0]).line;
    return { ok: false, message: `YAML: ${problem.message.split('\n', 1)[0] ?? problem.code}`, line };
  }
  const value: unknown = doc.toJS({ maxAliasCount: 50 });
  if (value === null || value === undefined) return { ok: false, message: 'the YAML is empty: it must hold one task definition' };
  if (typeof value !== 'object' || Array.isArray(value)) return { ok: false, message: 'the YAML must be a mapping of task fields (name, schedule, exec, …)', line: 1 };
  return { ok: true, value: value as Draft };
}

/** `schedule.expr` → ['schedule','expr']; `dependsOn[0].task` → ['dependsOn',0,'task']; `params["a b"]` → ['params','a b']. */
export function pathSegments(path: string): Array<string | number> {
  const out: Array<string | number> = [];
  const re = /([^.[\]]+)|\[(\d+)\]|\["((?:[^"\\]|\\.)*)"\]/g;
  for (const match of path.matchAll(re)) {
    if (match[2] !== undefined) out.push(Number(match[2]));
    else if (match[3] !== undefined) out.push(JSON.parse(`"${match[3]}"`) as string);
    else if (match[1] !== undefined) out.push(/^\d+$/.test(match[1]) ? Number(match[1]) : match[1]);
  }
  return out;
}

/**
 * The 1-based line of the field `path` in `text` (the key's line for a mapping entry), or of its
 * nearest parent that is there; undefined when not even the first segment is (e.g. a missing
 * required field) or the text does not parse.
 */
export function lineOfPath(text: string, path: string): number | undefined {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, keepSourceTokens: false });
  if (doc.errors.length > 0) return undefined;
  let node: unknown = doc.contents;
  let line: number | undefined;
  for (const segment of pathSegments(path)) {
    if (isMap(node)) {
      const pair = node.items.find((p) => (p.key as { value?: unknown } | null)?.value === segment || String((p.key as { value?: unknown } | null)?.value) === String(segment));
      if (pair === undefined) break;
      const keyRange = (pair.key as Node | null)?.range;
      if (keyRange !== undefined && keyRange !== null) line = lineCounter.linePos(keyRange[0]).line;
      node = pair.value;
    } else if (isSeq(node) && typeof segment === 'number') {
      const item = node.items[segment] as Node | undefined;
      if (item === undefined) break;
      if (item.range !== undefined && item.range !== null) line = lineCounter.linePos(item.range[0]).line;
      node = item;
    } else break;
  }
  return line;
}

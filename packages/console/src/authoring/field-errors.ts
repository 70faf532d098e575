/**
 * The API's refusals of a task write, put where the user fixes them: 400 `VALIDATION_FAILED`
 * issues (`details.issues` = `[{path, message}]`) by form field, or by YAML line; 409 `CYCLE`
 * (`details.cycle`) on `dependsOn`; 409 `ALREADY_EXISTS` on `name`.
 */
import { lineOfPath, pathSegments } from './task-yaml';

/** One problem the API named. */
export interface FieldIssue {
  path: string;
  message: string;
}

/** The form's fields, by the definition path they edit. */
export const FORM_FIELDS = [
  'name',
  'team',
  'schedule.type',
  'schedule.expr',
  'schedule.timezone',
  'schedule.everySeconds',
  'schedule.at',
  'exec.type',
  'exec.command',
  'exec.url',
  'timeoutSeconds',
  'retry.max',
  'retry.backoffSeconds',
  'tags',
  'enabled',
  'dependsOn',
] as const;

export type FormField = (typeof FORM_FIELDS)[number];

/** Which form field shows an issue at `path`: the field itself, the field it lies under, or the field that sets its parent. */
export function formFieldOf(path: string): FormField | null {
  const dotted = pathSegments(path).map(String);
  for (let n = dotted.length; n > 0; n -= 1) {
    const candidate = dotted.slice(0, n).join('.');
    if ((FORM_FIELDS as readonly string[]).includes(candidate)) return candidate as FormField;
  }
  // `schedule: required`, `exec: …` about the whole object: shown at its type.
  if (dotted.length === 1 && (dotted[0] === 'schedule' || dotted[0] === 'exec')) return `${dotted[0]}.type` as FormField;
  return null;
}

/** Issues split into those shown at a form field and the rest (shown in a list naming their path). */
export function byFormField(issues: readonly FieldIssue[]): { fields: Partial<Record<FormField, string[]>>; other: FieldIssue[] } {
  const fields: Partial<Record<FormField, string[]>> = {};
  const other: FieldIssue[] = [];
  for (const issue of issues) {
    const field = formFieldOf(issue.path);
    if (field === null) other.push(issue);
    else (fields[field] ??= []).push(issue.message);
  }
  return { fields, other };
}

/** One issue as placed in the YAML text: its line when the field is there. */
export interface LineIssue extends FieldIssue {
  line?: number;
}

/** Issues with the line of their field in `yaml` (sorted by line, unplaced ones last). */
export function byYamlLine(yaml: string, issues: readonly FieldIssue[]): LineIssue[] {
  const placed = issues.map((issue): LineIssue => {
    const line = issue.path === '' ? undefined : lineOfPath(yaml, issue.path);
    return line === undefined ? { ...issue } : { ...issue, line };
  });
  return placed.sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity));
}

/** What the API's error body says about fields: the issues of a 400, a cycle, a taken name. */
export function issuesOfError(code: string, message: string, details: unknown): FieldIssue[] {
  const d = (typeof details === 'object' && details !== null ? details : {}) as { issues?: unknown; cycle?: unknown };
  if (Array.isArray(d.issues)) {
    return d.issues.flatMap((i: unknown) => {
      const { path, message: text } = (typeof i === 'object' && i !== null ? i : {}) as { path?: unknown; message?: unknown };
      return typeof text === 'string' ? [{ path: typeof path === 'string' ? path : '', message: text }] : [];
    });
  }
  if (code === 'CYCLE') return [{ path: 'dependsOn', message: cycleText(message, d.cycle) }];
  if (code === 'ALREADY_EXISTS') return [{ path: 'name', message }];
  return [];
}

/** "dependsOn: cycle a → b → a" as the server names it (its message, else its `details.cycle`). */
export function cycleText(message: string, cycle: unknown): string {
  if (message !== '') return message;
  return Array.isArray(cycle) ? `dependsOn: cycle ${cycle.map(String).join(' → ')}` : 'dependsOn: a cycle';
}

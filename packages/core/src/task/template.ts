/**
 * Templates in shell arguments, python `args` and plugin config (ADMIN-API.md): `{{bizDate}}`,
 * `{{expectedTime}}` and `{{params.<key>}}` (dots reach into nested params: `{{params.db.host}}`).
 * Whitespace inside the braces is allowed (`{{ bizDate }}`).
 *
 * Decision: an unknown placeholder or a missing parameter is an ERROR (`TemplateError`), never
 * kept literally — a job run with a literal `{{bizdate}}` argument could touch the wrong data.
 * Unknown names are refused when the task is saved (`templateProblems`); a parameter missing at
 * run time fails the attempt with a message naming the placeholder. Text that is not a complete
 * `{{…}}` is kept as is; there is no escape syntax.
 *
 * Under `shell: true` (issue #18 item 5) each value is inserted as one single-quoted shell word
 * (`shellQuote`), so a param can never end the word, start a command or expand; a placeholder
 * must then stand in plain script text, not inside quotes (`shellPlaceholderProblems`), or the
 * expansion is refused. In argv form (no shell) values are inserted as they are: each argv
 * element reaches the program as one argument whatever it contains.
 */
import { TemplateError } from '../errors.js';
import type { Exec } from './exec-schema.js';
import { shellPlaceholderProblems, shellQuote, type ShellPlaceholderProblem } from './shell-quote.js';

/** What a template may refer to. */
export interface TemplateContext {
  /** The instance's business date, `YYYY-MM-DD`. */
  bizDate: string;
  /** The slot's expected time, ISO-8601 UTC with milliseconds. */
  expectedTime: string;
  /** The instance's params (definition params merged with trigger params). */
  params: Readonly<Record<string, unknown>>;
}

const PLACEHOLDER = /\{\{([^{}]*)\}\}/g;
const PARAM_PATH = /^params((?:\.[A-Za-z0-9_-]+)+)$/;
const KNOWN_FORMS = '{{bizDate}}, {{expectedTime}}, {{params.<key>}}';

type Reference = { kind: 'bizDate' } | { kind: 'expectedTime' } | { kind: 'param'; keys: string[] };

function parseReference(inner: string): Reference | null {
  const name = inner.trim();
  if (name === 'bizDate') return { kind: 'bizDate' };
  if (name === 'expectedTime') return { kind: 'expectedTime' };
  const match = PARAM_PATH.exec(name);
  if (match?.[1] !== undefined) return { kind: 'param', keys: match[1].slice(1).split('.') };
  return null;
}

/**
 * Problems with the placeholders of one string, without expanding it (used when a task is
 * saved). Returns one sentence per unknown placeholder; `[]` when all are known.
 */
export function templateProblems(text: string): string[] {
  const problems: string[] = [];
  for (const match of text.matchAll(PLACEHOLDER)) {
    if (parseReference(match[1] ?? '') === null) {
      problems.push(`unknown placeholder ${JSON.stringify(match[0])} (known: ${KNOWN_FORMS})`);
    }
  }
  return problems;
}

function lookupParam(params: Readonly<Record<string, unknown>>, keys: readonly string[]): unknown {
  let current: unknown = params;
  for (const key of keys) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, key)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

function render(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * How expanded values are written: `none` as they are (argv elements, plugin config), `shell`
 * as one single-quoted shell word each (the script of `shell: true`).
 */
export type TemplateQuoting = 'none' | 'shell';

function substitute(text: string, context: TemplateContext, quote: (value: string) => string): string {
  return text.replace(PLACEHOLDER, (whole: string, inner: string) => {
    const reference = parseReference(inner);
    if (reference === null) {
      throw new TemplateError(whole, `unknown placeholder ${JSON.stringify(whole)} (known: ${KNOWN_FORMS})`);
    }
    if (reference.kind === 'bizDate') return quote(context.bizDate);
    if (reference.kind === 'expectedTime') return quote(context.expectedTime);
    const value = lookupParam(context.params, reference.keys);
    if (value === undefined) {
      throw new TemplateError(whole, `placeholder ${JSON.stringify(whole)}: param "${reference.keys.join('.')}" is not set`);
    }
    return quote(render(value));
  });
}

const asIs = (value: string): string => value;

function shellProblemMessage({ placeholder, where }: ShellPlaceholderProblem): string {
  return (
    `placeholder ${JSON.stringify(placeholder)} is ${where}; under shell: true ax inserts each template value as one quoted ` +
    `shell word, so a placeholder must stand outside quotes and other shell syntax (write echo ${placeholder}, not echo "${placeholder}")`
  );
}

/**
 * Placeholders of a `shell: true` command that do not stand in plain script text (inside
 * quotes, after a backslash…), one sentence each with the index of its element; `[]` when all
 * can be replaced by a quoted word. A task with any of them cannot run.
 */
export function shellTemplateProblems(command: readonly string[]): Array<{ path: [number]; message: string }> {
  return shellPlaceholderProblems(command, PLACEHOLDER).map((problem) => ({ path: [problem.index], message: shellProblemMessage(problem) }));
}

function refuseShellProblems(command: readonly string[], label: (index: number) => string): void {
  const [first] = shellPlaceholderProblems(command, PLACEHOLDER);
  if (first !== undefined) throw new TemplateError(first.placeholder, `${label(first.index)}${shellProblemMessage(first)}`);
}

/**
 * Expands every placeholder of `text`. A string param is inserted as is; any other JSON value
 * (number, boolean, null, object, array) as its JSON text. With `quoting: 'shell'` `text` is
 * shell script and each value goes in as one single-quoted word (`'` written `'\''`).
 *
 * @throws TemplateError for an unknown placeholder or a param that is not there; with `shell`
 *   quoting also for a placeholder that does not stand in plain script text.
 */
export function expandTemplate(text: string, context: TemplateContext, quoting: TemplateQuoting = 'none'): string {
  if (quoting === 'none') return substitute(text, context, asIs);
  refuseShellProblems([text], () => '');
  return substitute(text, context, shellQuote);
}

/**
 * Expands placeholders in every string inside a JSON value (object values and array items;
 * keys are left alone). Returns a new value; the input is not changed.
 *
 * @throws TemplateError as `expandTemplate` does.
 */
export function expandTemplateValue(value: unknown, context: TemplateContext): unknown {
  if (typeof value === 'string') return expandTemplate(value, context);
  if (Array.isArray(value)) return value.map((item) => expandTemplateValue(item, context));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      Object.defineProperty(out, key, { value: expandTemplateValue(item, context), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return value;
}

/**
 * The executor with its templates expanded where ADMIN-API.md says they are: shell arguments,
 * python `args` and plugin config. Http and sql executors are returned unchanged. Under `shell: true` every value is
 * one quoted shell word of the script the elements are joined into (`expandTemplate` with
 * `shell` quoting, checked across the whole joined script).
 *
 * @throws TemplateError as `expandTemplate` does.
 */
export function expandExecTemplates(exec: Exec, context: TemplateContext): Exec {
  switch (exec.type) {
    case 'shell': {
      // Under shell: true the elements are joined with spaces into one script (shell executor).
      if (exec.shell) refuseShellProblems(exec.command, (index) => `exec.command[${index}]: `);
      const quote = exec.shell ? shellQuote : asIs;
      return { ...exec, command: exec.command.map((arg) => substitute(arg, context, quote)) };
    }
    case 'plugin':
      return { ...exec, config: expandTemplateValue(exec.config, context) as Record<string, unknown> };
    case 'python':
      // argv elements: each value is one argument as it is (no shell).
      return { ...exec, args: exec.args.map((arg) => substitute(arg, context, asIs)) };
    case 'http':
    case 'sql':
      // SQL never gets pasted values (the session variables @ax_biz_date… carry them instead).
      return exec;
  }
}

/** Every unknown placeholder inside a JSON value, with the relative path of the string it is in. */
export function templateProblemsIn(value: unknown, path: Array<string | number> = []): Array<{ path: Array<string | number>; message: string }> {
  if (typeof value === 'string') return templateProblems(value).map((message) => ({ path, message }));
  const out: Array<{ path: Array<string | number>; message: string }> = [];
  if (Array.isArray(value)) value.forEach((item, i) => out.push(...templateProblemsIn(item, [...path, i])));
  else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) out.push(...templateProblemsIn(item, [...path, key]));
  }
  return out;
}

/**
 * Named error classes of @ax/core and the `unknown` → `Error` conversion used at every catch.
 *
 * Every class carries a stable UPPER_SNAKE `code` so callers can classify errors without
 * `instanceof` across package copies (and the admin API can map them onto its error body).
 */

/** One validation problem: `path` like `schedule.expr` or `exec.command[0]` (`''` = the whole input). */
export interface Issue {
  /** Dotted field path with `[i]` for array indices; `''` when the problem concerns the whole input. */
  path: string;
  /** A self-contained sentence that names the field and, where there is one, the offending value. */
  message: string;
}

/**
 * Most issues an answer reports (#45): an input can be wrong in thousands of places, and
 * listing them all costs the server memory and the reader nothing useful. As the YAML import.
 */
export const MAX_REPORTED_ISSUES = 100;

/** The first `max` issues, and past them one last issue saying the rest were left out. */
export function capIssues(issues: readonly Issue[], max: number = MAX_REPORTED_ISSUES): Issue[] {
  if (issues.length <= max) return [...issues];
  return [...issues.slice(0, max), { path: '', message: `more issues not shown: only the first ${max} are reported` }];
}

/** Base class of every error @ax/core throws on purpose. */
export class AxError extends Error {
  /** Stable machine-readable code, e.g. `VALIDATION_FAILED`. */
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** How many issues a `ValidationError` message lists before summarising the rest. */
const MESSAGE_ISSUE_LIMIT = 5;

/** Input failed validation; `issues` holds every problem found (not only the first). */
export class ValidationError extends AxError {
  /** Every problem found, in input order. */
  readonly issues: readonly Issue[];

  /**
   * @param issues every problem found (at least one is expected).
   * @param subject what was validated, used as the message prefix (default `input`).
   */
  constructor(issues: readonly Issue[], subject = 'input') {
    super('VALIDATION_FAILED', ValidationError.summarize(issues, subject));
    this.issues = issues;
  }

  private static summarize(issues: readonly Issue[], subject: string): string {
    if (issues.length === 0) return `invalid ${subject}`;
    const shown = issues.slice(0, MESSAGE_ISSUE_LIMIT).map((i) => i.message);
    const more = issues.length - shown.length;
    return `invalid ${subject}: ${shown.join('; ')}${more > 0 ? `; and ${more} more` : ''}`;
  }
}

/** A state-machine transition that the table in `state/` does not allow. */
export class IllegalTransitionError extends AxError {
  readonly from: string;
  readonly to: string;

  constructor(from: string, to: string) {
    super('ILLEGAL_TRANSITION', `illegal instance state transition from ${from} to ${to}`);
    this.from = from;
    this.to = to;
  }
}

/** A dependency cycle; `cycle` lists the task names in order, first = last (e.g. `['a','b','a']`). */
export class CycleError extends AxError {
  readonly cycle: readonly string[];

  constructor(cycle: readonly string[]) {
    super('CYCLE', `dependency cycle: ${cycle.join(' → ')}`);
    this.cycle = cycle;
  }
}

/** A template placeholder that cannot be expanded (unknown name or missing parameter). */
export class TemplateError extends AxError {
  /** The placeholder as written, e.g. `{{params.date}}`. */
  readonly placeholder: string;

  constructor(placeholder: string, message: string) {
    super('TEMPLATE_FAILED', message);
    this.placeholder = placeholder;
  }
}

/**
 * Converts anything thrown into an `Error` (habit 7: convert `unknown` at each catch).
 * An `Error` is returned as is; a string becomes the message; anything else is described and
 * kept as `cause`.
 */
export function toError(thrown: unknown): Error {
  if (thrown instanceof Error) return thrown;
  if (typeof thrown === 'string') return new Error(thrown);
  return new Error(`non-error value thrown: ${describeThrown(thrown)}`, { cause: thrown });
}

function describeThrown(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
    case 'boolean':
    case 'bigint':
      return String(value);
    case 'symbol':
      return value.toString();
    case 'function':
      return `function ${value.name || '(anonymous)'}`;
    case 'undefined':
      return 'undefined';
    default:
      return describeObject(value as object | null);
  }
}

function describeObject(value: object | null): string {
  if (value === null) return 'null';
  const message = (value as { message?: unknown }).message;
  if (typeof message === 'string') return message;
  try {
    const json = JSON.stringify(value);
    if (json !== undefined) return json.length > 200 ? `${json.slice(0, 200)}…` : json;
  } catch {
    // Circular or otherwise unserialisable: fall through to the tag.
  }
  return Object.prototype.toString.call(value);
}

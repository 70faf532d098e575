/**
 * Cron expressions: validation with one human sentence per problem, and parsing into the value
 * sets of each field. cron-parser does the parsing (ranges, steps, lists, names, `L`, `#`, `?`)
 * so that ax reads an expression exactly as the library and its users do; ax checks each field
 * first to say *which* field is wrong, and rejects what it will not schedule (7 fields, empty
 * expressions, `H` hashed values, which differ between processes unless seeded).
 */
import { CronExpressionParser } from 'cron-parser';

/** The value sets of a parsed cron expression, as the enumerator needs them. */
export interface CronFields {
  /** The expression as written (trimmed). */
  readonly expr: string;
  /** True for a 6-field expression (leading seconds field). */
  readonly hasSeconds: boolean;
  /** Sorted, 0-59 (`[0]` for a 5-field expression). */
  readonly seconds: readonly number[];
  /** Sorted, 0-59. */
  readonly minutes: readonly number[];
  /** Sorted, 0-23. */
  readonly hours: readonly number[];
  /** True when the hour field is `*`: such an expression fires on both passes of a repeated (fall back) hour. */
  readonly hourIsWildcard: boolean;
  /** Sorted, 1-12. */
  readonly months: readonly number[];
  /** Sorted numeric days of month, 1-31. */
  readonly daysOfMonth: readonly number[];
  /** True when the day-of-month field holds `L` (last day of the month). */
  readonly lastDayOfMonth: boolean;
  /** True when the day-of-month field is `*` or `?` (cron-parser's notion of unrestricted). */
  readonly dayOfMonthIsWildcard: boolean;
  /** Sorted weekdays 0-6 (0 = Sunday; `7` folded to 0). */
  readonly daysOfWeek: readonly number[];
  /** Weekdays 0-6 written as `nL` (the last such weekday of the month). */
  readonly lastWeekdaysOfMonth: readonly number[];
  /** `k` of `d#k` (the k-th such weekday of the month, 1-5), or 0 when there is none. */
  readonly nthWeekdayOfMonth: number;
  /** True when the day-of-week field is `*` or `?`. */
  readonly dayOfWeekIsWildcard: boolean;
}

/** A cron expression that ax will not schedule; `message` is one human sentence. */
export class InvalidCronExpressionError extends Error {
  override readonly name = 'InvalidCronExpressionError';
}

interface FieldSpec {
  readonly name: string;
  readonly min: number;
  readonly max: number;
  readonly names?: readonly string[];
  /** Index in `names` that value `min` has (months are 1-based). */
  readonly nameBase?: number;
  readonly questionMark?: boolean;
  readonly lastDay?: boolean;
  readonly weekdaySuffixes?: boolean;
}

const MONTH_NAMES = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'] as const;
const DAY_NAMES = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'] as const;

const SECOND: FieldSpec = { name: 'second', min: 0, max: 59 };
const MINUTE: FieldSpec = { name: 'minute', min: 0, max: 59 };
const HOUR: FieldSpec = { name: 'hour', min: 0, max: 23 };
const DAY_OF_MONTH: FieldSpec = { name: 'day-of-month', min: 1, max: 31, questionMark: true, lastDay: true };
const MONTH: FieldSpec = { name: 'month', min: 1, max: 12, names: MONTH_NAMES, nameBase: 1 };
const DAY_OF_WEEK: FieldSpec = { name: 'day-of-week', min: 0, max: 7, names: DAY_NAMES, nameBase: 0, questionMark: true, weekdaySuffixes: true };

const FIVE_FIELDS = [MINUTE, HOUR, DAY_OF_MONTH, MONTH, DAY_OF_WEEK] as const;
const SIX_FIELDS = [SECOND, MINUTE, HOUR, DAY_OF_MONTH, MONTH, DAY_OF_WEEK] as const;

/** The `@` shorthands ax accepts, written out. */
const ALIASES: Readonly<Record<string, string>> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

/** Longest expression accepted (cron-parser's own limit). */
const MAX_EXPRESSION_LENGTH = 1024;

const FIELD_COUNT_HINT =
  'expected 5 fields (minute hour day-of-month month day-of-week) or 6 (a leading second field)';

/**
 * Why `expr` is not a cron expression ax can schedule, as one human sentence naming the field
 * (e.g. `minute field "61" is out of range 0-59`), or null when it is valid.
 *
 * Valid: 5 fields (minute precision) or 6 (leading seconds field); `*`, numbers, ranges `a-b`,
 * steps (`*`, `a-b` or `a` followed by `/n`), lists, month names `JAN`-`DEC` and day names `SUN`-`SAT`
 * (any case), `?` in day-of-month and day-of-week, `L` in day-of-month (last day of the month),
 * `nL` (last weekday n of the month) and `n#k` (k-th weekday n of the month) in day-of-week,
 * and the shorthands `@yearly @annually @monthly @weekly @daily @midnight @hourly`.
 * When both day-of-month and day-of-week are restricted, a day matching either fires (standard cron).
 */
export function cronProblem(expr: string): string | null {
  const known = problemByExpression.get(expr);
  if (known !== undefined) return known;
  let problem: string | null = null;
  try {
    parseCron(expr);
  } catch (error) {
    if (!(error instanceof InvalidCronExpressionError)) throw error;
    problem = error.message;
  }
  // Oldest first out (a Map iterates in insertion order): the bound holds whatever callers send.
  if (problemByExpression.size >= PROBLEM_CACHE_MAX) problemByExpression.delete(problemByExpression.keys().next().value as string);
  problemByExpression.set(expr, problem);
  return problem;
}

/**
 * `cronProblem` by expression. Every stored task is validated again when it is read (admin-api
 * lists, the scheduler's resync), and checking one expression through cron-parser cost ~0.1 ms:
 * 27 % of admin-api's busy time listing tasks (profile of 2026-12-04, #24). Tasks share a few
 * expressions; the answer for a string never changes.
 */
const problemByExpression = new Map<string, string | null>();
const PROBLEM_CACHE_MAX = 4_096;

/**
 * Parse a cron expression into its field value sets.
 * @throws InvalidCronExpressionError with the sentence {@link cronProblem} returns.
 */
export function parseCron(expr: string): CronFields {
  if (typeof expr !== 'string' || expr.trim() === '') throw new InvalidCronExpressionError('cron expression is empty');
  if (expr.length > MAX_EXPRESSION_LENGTH) {
    throw new InvalidCronExpressionError(`cron expression is longer than ${MAX_EXPRESSION_LENGTH} characters`);
  }
  const trimmed = expr.trim();
  let text = trimmed;
  if (text.startsWith('@')) {
    const expansion = ALIASES[text.toLowerCase()];
    if (expansion === undefined) {
      throw new InvalidCronExpressionError(
        `cron shorthand "${text}" is unknown; known shorthands are ${Object.keys(ALIASES).join(', ')}`,
      );
    }
    text = expansion;
  }
  const tokens = text.split(/\s+/);
  const specs = tokens.length === 5 ? FIVE_FIELDS : tokens.length === 6 ? SIX_FIELDS : null;
  if (specs === null) {
    throw new InvalidCronExpressionError(`cron expression has ${tokens.length} field${tokens.length === 1 ? '' : 's'}; ${FIELD_COUNT_HINT}`);
  }
  specs.forEach((spec, i) => checkField(spec, tokens[i] ?? ''));
  const sixFields = tokens.length === 6 ? tokens.join(' ') : `0 ${tokens.join(' ')}`;
  let parsed;
  try {
    // currentDate is fixed so that parsing never reads the clock; only the fields are used.
    parsed = CronExpressionParser.parse(sixFields, { currentDate: 0, tz: 'UTC' });
  } catch (error) {
    throw new InvalidCronExpressionError(explainParserError(specs, tokens, error));
  }
  const f = parsed.fields;
  const numbers = (values: readonly (number | string)[]): number[] =>
    values.filter((v): v is number => typeof v === 'number');
  const hourToken = tokens[specs.indexOf(HOUR)] ?? '';
  return {
    expr: trimmed,
    hasSeconds: tokens.length === 6,
    seconds: numbers(f.second.values),
    minutes: numbers(f.minute.values),
    hours: numbers(f.hour.values),
    hourIsWildcard: hourToken === '*',
    months: numbers(f.month.values),
    daysOfMonth: numbers(f.dayOfMonth.values),
    lastDayOfMonth: f.dayOfMonth.hasLastChar,
    dayOfMonthIsWildcard: f.dayOfMonth.isWildcard,
    daysOfWeek: [...new Set(numbers(f.dayOfWeek.values).map((v) => v % 7))].sort((a, b) => a - b),
    lastWeekdaysOfMonth: lastWeekdays(f.dayOfWeek.values, f.dayOfWeek.hasLastChar),
    nthWeekdayOfMonth: f.dayOfWeek.nthDay,
    dayOfWeekIsWildcard: f.dayOfWeek.isWildcard,
  };
}

/**
 * cron-parser matches a day against the "last weekday" form by the first digit of each value of
 * the field (`5L` → Friday) once any value carries `L`; mirror that exactly.
 */
function lastWeekdays(values: readonly (number | string)[], hasLastChar: boolean): number[] {
  if (!hasLastChar) return [];
  const days = new Set<number>();
  for (const value of values) {
    const digit = Number.parseInt(String(value).charAt(0), 10);
    if (Number.isInteger(digit)) days.add(digit % 7);
  }
  return [...days].sort((a, b) => a - b);
}

function fieldError(spec: FieldSpec, token: string, detail: string): InvalidCronExpressionError {
  return new InvalidCronExpressionError(`${spec.name} field "${token}" ${detail}`);
}

/** Check one field's syntax and ranges, so that an error names the field and the offending part. */
function checkField(spec: FieldSpec, token: string): void {
  if (/(^|,)H(?=[(/,]|$)/i.test(token)) {
    throw fieldError(spec, token, 'uses H (a hashed value), which ax does not support because it differs between processes');
  }
  if (token.includes('#')) checkNthWeekday(spec, token);
  const items = token.split(',');
  for (const item of items) {
    if (item === '') throw fieldError(spec, token, 'has an empty list item');
    checkItem(spec, token, item);
  }
}

function checkNthWeekday(spec: FieldSpec, token: string): void {
  if (spec.weekdaySuffixes !== true) throw fieldError(spec, token, 'uses "#", which only the day-of-week field allows');
  const match = /^([0-9]+|[A-Za-z]{3})#([0-9]+)$/.exec(token);
  if (match === null) {
    throw fieldError(spec, token, 'must be a single weekday#k when it uses "#" (no lists, ranges, steps or L)');
  }
  const k = Number(match[2]);
  if (k < 1 || k > 5) throw fieldError(spec, token, `asks for occurrence ${k} of a weekday; it must be 1-5`);
}

function checkItem(spec: FieldSpec, token: string, item: string): void {
  const slash = item.split('/');
  if (slash.length > 2) throw fieldError(spec, token, `has "${item}" with more than one "/"`);
  const [base = '', stepText] = slash;
  if (stepText !== undefined) {
    if (!/^\d+$/.test(stepText) || Number(stepText) < 1) {
      throw fieldError(spec, token, `has step "${stepText}"; a step must be a whole number of at least 1`);
    }
  }
  if (base === '*' || (base === '?' && spec.questionMark === true)) return;
  if (base === '?') throw fieldError(spec, token, 'uses "?", which only the day-of-month and day-of-week fields allow');
  if (base === 'L') {
    if (spec.lastDay === true && stepText === undefined) return;
    if (spec.lastDay === true) throw fieldError(spec, token, 'cannot step from L');
    if (spec.weekdaySuffixes === true) throw fieldError(spec, token, 'must write L after a weekday (5L = the last Friday of the month)');
    throw fieldError(spec, token, 'uses L, which only day-of-month (L) and day-of-week (nL) allow');
  }
  if (spec.weekdaySuffixes === true && stepText === undefined) {
    const suffixed = /^([0-9]+|[A-Za-z]{3})(?:L|#[0-9]+)$/.exec(base);
    if (suffixed !== null) {
      valueOf(spec, token, suffixed[1] ?? '');
      return;
    }
  }
  const range = base.split('-');
  if (range.length > 2) throw fieldError(spec, token, `has "${base}", which is not a value or a range a-b`);
  const [fromText = '', toText] = range;
  const from = valueOf(spec, token, fromText);
  if (toText !== undefined) {
    const to = valueOf(spec, token, toText);
    if (from > to) throw fieldError(spec, token, `has range ${fromText}-${toText}, whose start is after its end`);
  }
}

/** The number a value stands for, or an error naming the field and the value. */
function valueOf(spec: FieldSpec, token: string, text: string): number {
  if (/^\d+$/.test(text)) {
    const value = Number(text);
    if (value < spec.min || value > spec.max) {
      throw fieldError(
        spec,
        token,
        token === text ? `is out of range ${spec.min}-${spec.max}` : `has ${text}, out of range ${spec.min}-${spec.max}`,
      );
    }
    return value;
  }
  if (spec.names !== undefined && /^[a-z]{3}$/i.test(text)) {
    const index = spec.names.indexOf(text.toUpperCase());
    if (index >= 0) return index + (spec.nameBase ?? 0);
    const first = spec.names[0] ?? '';
    const last = spec.names[spec.names.length - 1] ?? '';
    throw fieldError(spec, token, `has unknown name "${text}"; use ${spec.min}-${spec.max} or ${first}-${last}`);
  }
  if (text === '') throw fieldError(spec, token, 'has a range or step with a missing value');
  throw fieldError(spec, token, `has "${text}", which is not a number${spec.names === undefined ? '' : ' or a name'}`);
}

/**
 * Turn what cron-parser still refuses after the per-field checks into a sentence. Each field is
 * tried alone against wildcards to find the one at fault; otherwise the combination is wrong
 * (e.g. `0 0 30 2 *`: February has no 30th).
 */
function explainParserError(specs: readonly FieldSpec[], tokens: readonly string[], error: unknown): string {
  const reason = error instanceof Error ? error.message : String(error);
  const offset = specs.length === 5 ? 1 : 0;
  for (let i = 0; i < specs.length; i++) {
    const probe = ['0', '*', '*', '*', '*', '*'];
    probe[i + offset] = tokens[i] ?? '';
    try {
      CronExpressionParser.parse(probe.join(' '), { currentDate: 0, tz: 'UTC' });
    } catch {
      // This field alone is refused: it is the one to name.
      return `${specs[i]?.name ?? 'a'} field "${tokens[i] ?? ''}" is invalid: ${reason}`;
    }
  }
  const dom = tokens[specs.indexOf(DAY_OF_MONTH)] ?? '';
  const month = tokens[specs.indexOf(MONTH)] ?? '';
  if (/day of month/i.test(reason)) {
    return `day-of-month field "${dom}" can never match: no month in month field "${month}" has such a day`;
  }
  return `cron expression "${tokens.join(' ')}" is invalid: ${reason}`;
}

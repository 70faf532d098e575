/**
 * Command-line parsing on `node:util` parseArgs: the options every command takes, the
 * command's own options, positionals, and validation of values (business dates, instants,
 * counts, `key=value` params). Anything wrong is a {@link UsageError} (exit 2, one line).
 */
import { parseArgs } from 'node:util';

/** A mistake in the command line: exit code 2, one line on stderr. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** One option of a command, as parseArgs takes it, with its help text. */
export interface OptionSpec {
  readonly type: 'string' | 'boolean';
  readonly short?: string;
  readonly multiple?: boolean;
  /** Placeholder of the value in help (`D`, `N`, `k=v`). */
  readonly value?: string;
  readonly help: string;
}

/** Options every command takes. */
export const GLOBAL_OPTIONS: Readonly<Record<'url' | 'token' | 'team' | 'json' | 'output' | 'help', OptionSpec>> = {
  url: { type: 'string', value: 'URL', help: 'admin API base URL (default: AX_URL, else http://127.0.0.1:8080)' },
  token: { type: 'string', value: 'TOKEN', help: 'bearer token (default: AX_TOKEN)' },
  team: { type: 'string', value: 'NAME', help: 'act for one team (default: AX_TEAM): narrows lists, the team of applied tasks, the scope of --prune' },
  json: { type: 'boolean', help: "print the API's JSON instead of a table" },
  output: { type: 'string', short: 'o', value: 'table|json|yaml', help: 'output format; json = --json; yaml: definitions to apply again (tasks get/list, calendars get)' },
  help: { type: 'boolean', short: 'h', help: 'show help for the command' },
};

/** Names of the global options that take a value (for finding the command words). */
const VALUE_OPTIONS = new Set(['--url', '--token', '--team', '--output', '-o']);

/** The parsed command line of one command. */
export interface ParsedArgs {
  readonly values: Readonly<Record<string, string | boolean | string[] | undefined>>;
  readonly positionals: readonly string[];
}

/**
 * The command words (`tasks`, `get`) and the remaining arguments. Global options may come
 * before the words (`axctl --json tasks list`); the words are the first `count` arguments that
 * are neither options nor values of `--url`/`--token`.
 */
export function splitCommandWords(argv: readonly string[], wordsWanted: (first: string) => number): { words: string[]; rest: string[] } {
  const words: string[] = [];
  const rest: string[] = [];
  let wanted = 1;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') {
      rest.push(...argv.slice(i));
      break;
    }
    if (words.length < wanted && !arg.startsWith('-')) {
      words.push(arg);
      if (words.length === 1) wanted = wordsWanted(arg);
      continue;
    }
    rest.push(arg);
    if (VALUE_OPTIONS.has(arg) && i + 1 < argv.length) rest.push(argv[++i] as string);
  }
  return { words, rest };
}

/** First sentence of a parseArgs error, reworded to name the option. */
function describeParseError(err: Error & { code?: string }): string {
  const quoted = /'([^']+)'/.exec(err.message)?.[1];
  switch (err.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `unknown option ${quoted ?? err.message}`;
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE': {
      const option = quoted?.split(' ')[0] ?? 'an option';
      return err.message.includes('argument missing') ? `${option}: expects a value` : `${option}: ${err.message.split('. ')[0] ?? err.message}`;
    }
    default:
      return err.message.split('. ')[0] ?? err.message;
  }
}

/** Parses a command's arguments (its own options plus the global ones). */
export function parseCommandArgs(args: readonly string[], options: Readonly<Record<string, OptionSpec>>, command: string): ParsedArgs {
  const config: Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }> = {};
  for (const [name, o] of Object.entries({ ...GLOBAL_OPTIONS, ...options })) {
    config[name] = { type: o.type, ...(o.short === undefined ? {} : { short: o.short }), ...(o.multiple === undefined ? {} : { multiple: o.multiple }) };
  }
  try {
    const parsed = parseArgs({ args: [...args], options: config, allowPositionals: true, strict: true });
    return { values: parsed.values as ParsedArgs['values'], positionals: parsed.positionals };
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    throw new UsageError(`${command}: ${describeParseError(e)} (see axctl ${command} --help)`);
  }
}

/** A string option's value, or undefined. */
export function stringOption(args: ParsedArgs, name: string): string | undefined {
  const v = args.values[name];
  return typeof v === 'string' ? v : undefined;
}

/** A required string option. */
export function requiredOption(args: ParsedArgs, name: string, command: string): string {
  const v = stringOption(args, name);
  if (v === undefined || v === '') throw new UsageError(`${command}: --${name} is required (see axctl ${command} --help)`);
  return v;
}

/** A boolean option. */
export function flag(args: ParsedArgs, name: string): boolean {
  return args.values[name] === true;
}

/** Every value of a repeatable option. */
export function listOption(args: ParsedArgs, name: string): string[] {
  const v = args.values[name];
  return Array.isArray(v) ? v : typeof v === 'string' ? [v] : [];
}

/** Exactly the named positionals (`<name>`, `<id>`), or a usage error. */
export function positionals(args: ParsedArgs, names: readonly string[], command: string): string[] {
  const given = args.positionals;
  if (given.length < names.length) throw new UsageError(`${command}: missing <${names[given.length] ?? 'argument'}> (see axctl ${command} --help)`);
  if (given.length > names.length) throw new UsageError(`${command}: unexpected argument ${JSON.stringify(given[names.length])} (see axctl ${command} --help)`);
  return [...given];
}

/** A business date `YYYY-MM-DD` that exists in the calendar. */
export function bizDate(flagName: string, value: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  const d = m === null ? null : new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  if (d === null || Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== value) {
    throw new UsageError(`--${flagName}: expected YYYY-MM-DD, got ${JSON.stringify(value)}`);
  }
  return value;
}

/**
 * An instant for `--from`/`--to`: an ISO-8601 date-time with `Z` or an offset, or a date
 * `YYYY-MM-DD` (its 00:00 UTC). Returned as ISO-8601 UTC with milliseconds.
 */
export function instant(flagName: string, value: string): string {
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) return `${bizDate(flagName, value)}T00:00:00.000Z`;
  const ok = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i.test(value);
  const ms = Date.parse(value);
  if (!ok || !Number.isFinite(ms)) {
    throw new UsageError(`--${flagName}: expected a date YYYY-MM-DD or an ISO-8601 time like 2026-12-01T02:00:00Z, got ${JSON.stringify(value)}`);
  }
  return new Date(ms).toISOString();
}

/** An integer in `[min, max]`. */
export function integer(flagName: string, value: string, min: number, max: number): number {
  const n = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new UsageError(`--${flagName}: expected an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  return n;
}

/** A positive number of seconds (fractions allowed), returned in milliseconds. */
export function secondsToMs(flagName: string, value: string): number {
  const n = /^\d+(\.\d+)?$/.test(value) ? Number(value) : NaN;
  if (!Number.isFinite(n) || n <= 0 || n > 31_536_000) throw new UsageError(`--${flagName}: expected a positive number of seconds, got ${JSON.stringify(value)}`);
  return Math.round(n * 1000);
}

/** `--param k=v` values as an object (the value is a string; the last of a repeated key wins). */
export function keyValues(flagName: string, values: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of values) {
    const at = v.indexOf('=');
    if (at <= 0) throw new UsageError(`--${flagName}: expected key=value, got ${JSON.stringify(v)}`);
    out[v.slice(0, at)] = v.slice(at + 1);
  }
  return out;
}

/** The admin API base URL (http or https), without a trailing slash. */
export function baseUrl(value: string, source: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`${source}: expected an http(s) URL, got ${JSON.stringify(value)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`${source}: expected an http(s) URL, got ${JSON.stringify(value)}`);
  return value.replace(/\/+$/, '');
}

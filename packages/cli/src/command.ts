/** What a command is (name, options, help, run) and what it runs with. */
import { GLOBAL_OPTIONS, type OptionSpec, type ParsedArgs } from './args.js';
import type { ApiClient } from './client.js';

/** Where output goes (stdout / stderr lines, and raw stdout bytes). */
export interface Io {
  out(line: string): void;
  err(line: string): void;
  /** Raw bytes to stdout, as they are (job output); resolves once they may be followed by more. */
  write(bytes: Uint8Array): Promise<void>;
  /** Clears a terminal screen (`instances list -w`); absent when stdout is not a terminal. */
  clear?(): void;
}

/** What a command runs with. */
export interface Ctx {
  readonly client: ApiClient;
  readonly io: Io;
  /** `--json`: print the API's JSON. */
  readonly json: boolean;
  /** `tasks get`: named in error lines. */
  readonly command: string;
  /** Aborted by Ctrl-C (SIGINT) or SIGTERM. */
  readonly signal: AbortSignal;
  /** `-o yaml`: print task definitions as a YAML job file (commands with `yaml: true`). */
  readonly yaml?: boolean;
  /** The global `--team` (or `AX_TEAM`): narrows lists, the team of applied tasks, the scope of prune. */
  readonly team?: string | undefined;
}

/** One command (`tasks get`). */
export interface CommandSpec {
  /** `tasks get`. */
  readonly name: string;
  /** Argument synopsis after the name: `<name> [--json]`. */
  readonly synopsis: string;
  readonly summary: string;
  /** The command's own options (the global ones are added). */
  readonly options: Readonly<Record<string, OptionSpec>>;
  /** Extra help lines (examples, notes). */
  readonly notes?: readonly string[];
  /** Whether `-o yaml` is meaningful (it prints definitions to apply again: tasks, calendars). Default false. */
  readonly yaml?: boolean;
  /** Answers nothing (exit 0) or its own exit code (`apply --dry-run` with changes: 3). */
  run(ctx: Ctx, args: ParsedArgs): Promise<void | number>;
}

/** A command failed (exit 1) for a reason other than the API's answer: `axctl: <message>`. */
export class CommandFailed extends Error {
  /** The details were printed already; nothing more to print. */
  readonly reported: boolean;

  constructor(message: string, opts: { reported?: boolean } = {}) {
    super(message);
    this.name = 'CommandFailed';
    this.reported = opts.reported ?? false;
  }
}

/** Prints a value as the API's JSON (indented). */
export function printJson(ctx: Ctx, value: unknown): void {
  ctx.io.out(JSON.stringify(value, null, 2));
}

/** After a table of a list with another page: how to get it (stderr, so stdout stays the table). */
export function printMore(ctx: Ctx, nextCursor: string | null): void {
  if (nextCursor !== null) ctx.io.err(`(more results: add --cursor ${nextCursor})`);
}

function optionLines(options: Readonly<Record<string, OptionSpec>>): string[] {
  const entries = Object.entries(options).map(([name, o]) => {
    const short = o.short === undefined ? '    ' : `-${o.short}, `;
    const value = o.type === 'string' ? ` ${o.value ?? 'VALUE'}` : '';
    return [`  ${short}--${name}${value}`, `${o.help}${o.multiple === true ? ' (repeatable)' : ''}`] as const;
  });
  const width = Math.max(0, ...entries.map(([left]) => left.length));
  return entries.map(([left, help]) => `${left.padEnd(width)}  ${help}`);
}

/** `--help` of one command. */
export function commandHelp(spec: CommandSpec): string[] {
  const own = Object.keys(spec.options).length > 0 ? ['', 'Options:', ...optionLines(spec.options)] : [];
  return [
    `usage: axctl ${spec.name}${spec.synopsis === '' ? '' : ` ${spec.synopsis}`}`,
    '',
    spec.summary,
    ...own,
    '',
    'Global options:',
    ...optionLines(GLOBAL_OPTIONS),
    ...(spec.notes === undefined ? [] : ['', ...spec.notes]),
  ];
}

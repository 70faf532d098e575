/**
 * `axctl`: the command line of the ax admin API. `run` finds the command (`tasks get`),
 * parses its arguments, calls the API and maps every outcome to an exit code — 0 success,
 * 1 failure (the API refused, could not be reached, or answered an error), 2 usage (unknown
 * command or option, missing or malformed argument) — with errors as one line on stderr.
 * `main` wires it to the process (bin/axctl.js).
 */
import { baseUrl, flag, parseCommandArgs, splitCommandWords, stringOption, UsageError } from './args.js';
import { ApiClient, ApiRequestError, NetworkError, oneLine } from './client.js';
import { CommandFailed, commandHelp, type CommandSpec, type Io } from './command.js';
import { instanceCommands } from './commands/instances.js';
import { logsCommand } from './commands/logs.js';
import { rerunCommands } from './commands/reruns.js';
import { tailCommand } from './commands/tail.js';
import { taskCommands } from './commands/tasks.js';
import { teamCommands } from './commands/teams.js';
import { workerCommands } from './commands/workers.js';

/** Default `AX_URL`. */
export const DEFAULT_URL = 'http://127.0.0.1:8080';

/** Exit codes. */
export const EXIT = { ok: 0, failure: 1, usage: 2, interrupted: 130 } as const;

/** Every command, by its words. */
export const COMMANDS: readonly CommandSpec[] = [...taskCommands, ...instanceCommands, ...rerunCommands, ...workerCommands, ...teamCommands, tailCommand, logsCommand];

/** Command groups (first word) and what they are for. */
const GROUPS: ReadonlyArray<readonly [string, string]> = [
  ['tasks', 'task definitions: list, get, apply, enable, disable, trigger'],
  ['instances', 'runs of tasks: list, get, cancel'],
  ['rerun', 'run again: instance, dag, failed, backfill'],
  ['workers', 'the worker registry; drain a worker'],
  ['teams', 'the teams the token covers: list, show, create'],
  ['tail', 'follow instance events as they happen'],
  ['logs', "print (and follow) a run's output"],
];

/** Commands whose first word takes a second word. */
const SUBCOMMANDED = new Set(['tasks', 'instances', 'rerun', 'workers', 'teams']);

function mainHelp(): string[] {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    'usage: axctl <command> [options]',
    '',
    'The command line of the ax admin API.',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Global options: --url URL (AX_URL, default http://127.0.0.1:8080), --token TOKEN (AX_TOKEN),',
    "--json (print the API's JSON), -h/--help. `axctl <command> --help` describes a command.",
    'Exit codes: 0 success, 1 failure (API or network error; `tasks trigger --wait`: the run did not',
    'succeed), 2 usage error, 130 interrupted.',
  ];
}

function groupHelp(group: string): string[] {
  const commands = COMMANDS.filter((c) => c.name === group || c.name.startsWith(`${group} `));
  const width = Math.max(...commands.map((c) => c.name.length + 1 + c.synopsis.length));
  return [
    `usage: axctl ${group} <command> [options]`,
    '',
    ...commands.map((c) => `  ${`${c.name} ${c.synopsis}`.padEnd(width)}  ${c.summary}`),
    '',
    `\`axctl ${group} <command> --help\` describes a command.`,
  ];
}

/** What `run` needs from the process. */
export interface RunOptions {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly io: Io;
  /** Aborted by Ctrl-C: `tail` stops (exit 0), any other command is interrupted (exit 130). */
  readonly signal?: AbortSignal;
}

/** Finds the command of the words, or answers help / a usage error. */
function resolve(words: readonly string[], wantsHelp: boolean): CommandSpec | { help: string[] } {
  const [group, sub] = words;
  if (group === undefined || group === 'help') {
    if (wantsHelp || group === 'help') return { help: mainHelp() };
    throw new UsageError('missing command (see axctl --help)');
  }
  if (!GROUPS.some(([g]) => g === group)) throw new UsageError(`unknown command ${JSON.stringify(group)} (see axctl --help)`);
  if (group === 'workers' && (sub === undefined || sub === 'list')) return COMMANDS.find((c) => c.name === 'workers') as CommandSpec;
  if (!SUBCOMMANDED.has(group)) return COMMANDS.find((c) => c.name === group) as CommandSpec;
  if (sub === undefined) {
    if (wantsHelp) return { help: groupHelp(group) };
    throw new UsageError(`${group}: missing command (see axctl ${group} --help)`);
  }
  const spec = COMMANDS.find((c) => c.name === `${group} ${sub}`);
  if (spec === undefined) throw new UsageError(`${group}: unknown command ${JSON.stringify(sub)} (see axctl ${group} --help)`);
  return spec;
}

/** Runs one command line; answers the exit code. Never throws. */
export async function run(argv: readonly string[], opts: RunOptions): Promise<number> {
  const { io } = opts;
  const signal = opts.signal ?? new AbortController().signal;
  let command = '';
  try {
    const { words, rest } = splitCommandWords(argv, (first) => (SUBCOMMANDED.has(first) ? 2 : 1));
    const wantsHelp = rest.includes('--help') || rest.includes('-h');
    const found = resolve(words, wantsHelp);
    if ('help' in found) {
      found.help.forEach((l) => io.out(l));
      return EXIT.ok;
    }
    command = found.name;
    const args = parseCommandArgs(rest, found.options, command);
    if (flag(args, 'help')) {
      commandHelp(found).forEach((l) => io.out(l));
      return EXIT.ok;
    }
    const urlFlag = stringOption(args, 'url');
    const url = urlFlag !== undefined ? baseUrl(urlFlag, '--url') : baseUrl(opts.env['AX_URL'] || DEFAULT_URL, 'AX_URL');
    const token = stringOption(args, 'token') ?? opts.env['AX_TOKEN'];
    const client = new ApiClient({ baseUrl: url, token, signal });
    await found.run({ client, io, json: flag(args, 'json'), command, signal }, args);
    return EXIT.ok;
  } catch (err) {
    const where = command === '' ? '' : `${command}: `;
    if (err instanceof UsageError) {
      io.err(`axctl: ${oneLine(err.message)}`);
      return EXIT.usage;
    }
    if (signal.aborted && command !== 'tail') {
      io.err(`axctl: ${where}interrupted`);
      return EXIT.interrupted;
    }
    if (err instanceof ApiRequestError) {
      const everyTeam = Array.isArray(err.details['required']) && (err.details['required'] as unknown[]).includes('*');
      const hint = err.status === 401 ? '; check AX_TOKEN or --token' : err.status === 403 ? (everyTeam ? '; the token must cover every team ("*")' : '; the token needs a higher role') : '';
      io.err(`axctl: ${where}${err.message}${hint}`);
    } else if (err instanceof NetworkError) {
      io.err(`axctl: ${oneLine(err.message)}`);
    } else if (err instanceof CommandFailed) {
      if (!err.reported) io.err(`axctl: ${oneLine(err.message)}`);
    } else {
      const message = err instanceof Error ? err.message : String(err);
      io.err(`axctl: ${where}${oneLine(message)}`);
    }
    return EXIT.failure;
  }
}

/** The process entry: argv, environment, stdout/stderr, Ctrl-C; sets the exit code. */
export async function main(): Promise<void> {
  const controller = new AbortController();
  const onSignal = (): void => controller.abort();
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // `axctl … | head`: a closed pipe ends the output quietly.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(EXIT.ok);
    process.stderr.write(`axctl: cannot write output: ${oneLine(err.message)}\n`);
    process.exit(EXIT.failure);
  });
  try {
    process.exitCode = await run(process.argv.slice(2), {
      env: process.env,
      io: {
        out: (line) => void process.stdout.write(`${line}\n`),
        err: (line) => void process.stderr.write(`${line}\n`),
        // waits for 'drain' when stdout is full, so a large log is never all in memory
        write: (bytes) => new Promise<void>((resolve) => (process.stdout.write(bytes) ? resolve() : process.stdout.once('drain', resolve))),
      },
      signal: controller.signal,
    });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

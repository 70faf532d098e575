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
import { applyCommand } from './commands/apply.js';
import { completionCommand } from './commands/completion.js';
import { dagCommands } from './commands/dag.js';
import { instanceCommands } from './commands/instances.js';
import { logsCommand } from './commands/logs.js';
import { rerunCommands } from './commands/reruns.js';
import { rerunBatchCommands } from './commands/rerun-batches.js';
import { alertCommands } from './commands/alerts.js';
import { auditCommands } from './commands/audit.js';
import { deadLetterCommands } from './commands/dead-letters.js';
import { tailCommand } from './commands/tail.js';
import { taskCommands } from './commands/tasks.js';
import { taskVersionCommands } from './commands/task-versions.js';
import { teamCommands, teamName } from './commands/teams.js';
import { statusCommands } from './commands/status.js';
import { workerCommands } from './commands/workers.js';
import { enrollmentCommands } from './commands/enrollments.js';
import { tokenCommands } from './commands/tokens.js';
import { calendarCommands } from './commands/calendars.js';

/** Default `AX_URL`. */
export const DEFAULT_URL = 'http://127.0.0.1:8080';

/** Exit codes. */
export const EXIT = { ok: 0, failure: 1, usage: 2, dryRunChanges: 3, interrupted: 130 } as const;

/** Every command, by its words. */
export const COMMANDS: readonly CommandSpec[] = [
  applyCommand,
  ...taskCommands,
  ...taskVersionCommands,
  ...dagCommands,
  ...instanceCommands,
  ...rerunCommands,
  ...rerunBatchCommands,
  ...alertCommands,
  ...deadLetterCommands,
  ...auditCommands,
  ...workerCommands,
  ...enrollmentCommands,
  ...teamCommands,
  ...tokenCommands,
  ...calendarCommands,
  ...statusCommands,
  tailCommand,
  logsCommand,
  completionCommand(() => COMMANDS),
];

/** Command groups (first word) and what they are for. */
const GROUPS: ReadonlyArray<readonly [string, string]> = [
  ['apply', 'make the server match job files (a file or a folder): diff, dry run, prune'],
  ['tasks', 'task definitions: list, get, apply, delete, enable, disable, trigger'],
  ['edges', 'DAG edges: add, rm, list'],
  ['dag', 'show a DAG from its root, with the states of one business date'],
  ['instances', 'runs of tasks: list, get, cancel'],
  ['rerun', 'run again: instance, dag, failed, backfill'],
  ['reruns', 'rerun and backfill batches: list, get, watch (to the last downstream run), cancel'],
  ['alerts', 'alerts raised, with how their delivery went: list'],
  ['dead-letters', 'messages that failed validation: list'],
  ['audit', 'who did what through the API: list'],
  ['workers', 'the worker registry; drain and undrain a worker; enroll workers, list and revoke enrollments'],
  ['teams', 'the teams the token covers: list, show, create, update, delete; executor-key, rotate-key'],
  ['tokens', 'API tokens: list, create (the secret shown once), revoke'],
  ['calendars', 'dates the tasks naming a calendar do not fire on: list, get, apply, delete'],
  ['status', 'the platform at a glance: dispatch paused, workers, backlog, late runs'],
  ['dispatch', 'the global dispatch switch: show, pause (with a reason), resume'],
  ['tail', 'follow instance events as they happen'],
  ['logs', "print (and follow) a run's output"],
  ['completion', 'shell completion script: bash or zsh'],
];

/** Commands whose first word takes a second word. */
const SUBCOMMANDED = new Set(['tasks', 'edges', 'dag', 'instances', 'rerun', 'reruns', 'alerts', 'dead-letters', 'audit', 'workers', 'teams', 'tokens', 'calendars', 'dispatch']);

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
    "--team NAME (AX_TEAM), --json or -o json|yaml|table (print the API's JSON / task definitions as YAML),",
    '-h/--help. `axctl <command> --help` describes a command.',
    'Exit codes: 0 success, 1 failure (API or network error; `tasks trigger --wait`: the run did not',
    'succeed), 2 usage error, 3 `apply --dry-run` with changes, 124 `--wait --timeout` ran out, 130 interrupted.',
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
    const output = stringOption(args, 'output');
    if (output !== undefined && !['table', 'json', 'yaml'].includes(output)) throw new UsageError(`-o/--output: expected table, json or yaml, got ${JSON.stringify(output)}`);
    if (output === 'yaml' && found.yaml !== true) throw new UsageError(`${command}: -o yaml prints definitions to apply again (tasks get, tasks list, calendars get); use -o json here`);
    const teamFlag = stringOption(args, 'team');
    const teamEnv = opts.env['AX_TEAM'];
    const team = teamFlag !== undefined ? teamName('--team', teamFlag) : teamEnv !== undefined && teamEnv !== '' ? teamName('AX_TEAM', teamEnv) : undefined;
    const client = new ApiClient({ baseUrl: url, token, signal });
    const code = await found.run({ client, io, json: flag(args, 'json') || output === 'json', yaml: output === 'yaml', team, command, signal }, args);
    return typeof code === 'number' ? code : EXIT.ok;
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
      // A role refusal names the role required; a 403 about teams (a token made for others', a rerun reaching them) is not helped by a role.
      const role = typeof err.details['required'] === 'string';
      const hint = err.status === 401 ? '; check AX_TOKEN or --token' : err.status === 403 ? (everyTeam ? '; the token must cover every team ("*")' : role ? '; the token needs a higher role' : '') : '';
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
        ...(process.stdout.isTTY ? { clear: () => void process.stdout.write('\x1b[H\x1b[2J') } : {}),
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

/**
 * `axctl logs <instance-id|execution-id> [-f] [--stdout|--stderr] [--attempt N]`: a run's
 * output, byte for byte on stdout (both streams interleaved as captured, unless one is asked
 * for); with `-f`, then as it comes until the run ends. An execution id is a UUID, an instance
 * id is digits. Notes (no output yet, truncated, incomplete) go to stderr, so stdout is
 * only the job's bytes.
 */
import { flag, integer, positionals, stringOption, UsageError } from '../args.js';
import { ApiRequestError } from '../client.js';
import { CommandFailed, type CommandSpec, type Ctx } from '../command.js';
import { executionsInOrder, followInstance, instanceLogPath, printExecution, printPages, type LogView } from './log-follow.js';
import type { InstanceDetail } from '@ax/api-types';
import { instancePath } from './instances.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const INSTANCE_ID = /^\d{1,19}$/;

/** What `<id>` names. */
export type LogTarget = { kind: 'instance'; id: string } | { kind: 'execution'; id: string };

/** Parses `<instance-id|execution-id>` (pure). */
export function logTarget(value: string, command: string): LogTarget {
  if (INSTANCE_ID.test(value)) return { kind: 'instance', id: value };
  if (UUID.test(value)) return { kind: 'execution', id: value.toLowerCase() };
  throw new UsageError(`${command}: expected an instance id (digits) or an execution id (a UUID), got ${JSON.stringify(value)}`);
}

/** `--stdout` / `--stderr` / neither (pure). */
export function logView(stdout: boolean, stderr: boolean, command: string): LogView {
  if (stdout && stderr) throw new UsageError(`${command}: give --stdout or --stderr, not both (neither = both streams)`);
  return stdout ? 'stdout' : stderr ? 'stderr' : 'all';
}

/** A 404 as "instance 123 not found" (the API's code kept at the end, as for every error). */
async function orNotFound<T>(ctx: Ctx, what: string, send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (err) {
    if (err instanceof ApiRequestError && err.status === 404) throw new CommandFailed(`${ctx.command}: ${what} not found (404 ${err.code})`);
    throw err;
  }
}

/** The execution of attempt `n` of an instance. */
async function attemptExecution(ctx: Ctx, instanceId: string, n: number): Promise<string> {
  const { body } = await orNotFound(ctx, `instance ${instanceId}`, () => ctx.client.get<InstanceDetail>(instancePath(instanceId)));
  const executions = executionsInOrder(body);
  const found = executions.filter((e) => e.attempt === n).at(-1);
  if (found === undefined) {
    const had = executions.length === 0 ? 'has not run yet' : `has attempt${executions.length === 1 ? '' : 's'} ${executions.map((e) => e.attempt).join(', ')}`;
    throw new CommandFailed(`${ctx.command}: instance ${instanceId} has no attempt ${n} (it ${had})`);
  }
  return found.executionId;
}

function noteEnd(ctx: Ctx, end: { truncated: boolean; complete: boolean }, follow: boolean): void {
  if (end.truncated) ctx.io.err('(output truncated: bytes past AX_LOG_MAX_BYTES were dropped)');
  if (follow && !end.complete) ctx.io.err('(output incomplete: its worker never sent the rest)');
}

export const logsCommand: CommandSpec = {
  name: 'logs',
  synopsis: '<instance-id|execution-id> [-f|--follow] [--stdout|--stderr] [--attempt N]',
  summary: "Print a run's output (stdout and stderr as captured); -f follows it until the run ends.",
  options: {
    follow: { type: 'boolean', short: 'f', help: 'then follow the output as it comes, until the run ends (an instance: through its retries, until it is final)' },
    stdout: { type: 'boolean', help: 'only the stdout stream' },
    stderr: { type: 'boolean', help: 'only the stderr stream' },
    attempt: { type: 'string', value: 'N', help: "attempt N of the instance (default: its current attempt)" },
  },
  notes: [
    'The output goes to stdout byte for byte, both streams interleaved in the order they were',
    'captured (the stderr stream too, unless --stdout); --stderr prints only the job\'s stderr.',
    'Notes (not dispatched yet, truncated output) go to stderr. Exit 0 when the output was',
    'printed, whatever the run\'s result (see `tasks trigger --wait`).',
    '',
    'Examples:',
    '  axctl logs 4211                  the current attempt of instance 4211',
    '  axctl logs 4211 --attempt 1      its first attempt',
    '  axctl logs 4211 -f               follow it (and its retries) until the instance is final',
    '  axctl logs <execution> --stderr  one execution (a UUID, see `instances get`), its stderr only',
  ],
  run: async (ctx, args) => {
    const [raw] = positionals(args, ['instance-id|execution-id'], ctx.command) as [string];
    const target = logTarget(raw, ctx.command);
    const view = logView(flag(args, 'stdout'), flag(args, 'stderr'), ctx.command);
    const follow = flag(args, 'follow');
    const attempt = stringOption(args, 'attempt');
    if (attempt !== undefined && target.kind === 'execution') throw new UsageError(`${ctx.command}: --attempt picks an attempt of an instance; an execution id names one already`);
    if (ctx.json) throw new UsageError(`${ctx.command}: prints the output as it is; --json does not apply`);

    if (target.kind === 'execution' || attempt !== undefined) {
      const executionId = target.kind === 'execution' ? target.id : await attemptExecution(ctx, target.id, integer('attempt', attempt ?? '', 1, 1000));
      const end = await orNotFound(ctx, `execution ${executionId}`, () => printExecution(ctx, executionId, view, follow));
      noteEnd(ctx, end, follow);
      return;
    }
    if (follow) {
      await orNotFound(ctx, `instance ${target.id}`, () => followInstance(ctx, target.id, { logs: true, view, fromCurrent: true }));
      return;
    }
    const pos = await orNotFound(ctx, `instance ${target.id}`, () => printPages(ctx, instanceLogPath(target.id), view));
    if (pos.executionId === null) ctx.io.err(`(instance ${target.id} has not been dispatched yet: no output)`);
    noteEnd(ctx, pos, false);
  },
};

/** `axctl rerun instance|dag|failed|backfill` → `POST /api/v1/reruns`. */
import type { RerunPlan, RerunStarted } from '@ax/api-types';
import { bizDate, flag, integer, positionals, requiredOption, stringOption, UsageError, type ParsedArgs } from '../args.js';
import type { OptionSpec } from '../args.js';
import { printJson, type CommandSpec, type Ctx } from '../command.js';
import { formatTable } from '../table.js';

const COMMON: Readonly<Record<string, OptionSpec>> = {
  reason: { type: 'string', value: 'TEXT', help: 'why (required; written to the audit log)' },
  'force-downstream': { type: 'boolean', help: 'dag: also re-run succeeded downstream instances (admin token)' },
  'dry-run': { type: 'boolean', help: 'list what would run; change nothing' },
};

/**
 * A line of a dry run. The OpenAPI document types the plan's items only as objects
 * (`{[key: string]: unknown}`), so this reading of them stays here (all fields optional).
 */
interface PlanLine {
  action?: string;
  id?: string;
  taskName?: string;
  expectedTime?: string;
  bizDate?: string;
  from?: string;
  state?: string;
  runNo?: number;
}

/** `POST /api/v1/reruns`: the plan of a dry run (200), or the started batch (202). */
type RerunAnswer = (Omit<RerunPlan, 'instances'> & { instances: PlanLine[] }) | RerunStarted;

async function send(ctx: Ctx, args: ParsedArgs, body: Record<string, unknown>): Promise<void> {
  const reason = stringOption(args, 'reason');
  if (reason === undefined || reason.trim() === '') throw new UsageError(`${ctx.command}: --reason is required (see axctl ${ctx.command} --help)`);
  const dryRun = flag(args, 'dry-run');
  const { body: answer } = await ctx.client.post<RerunAnswer>('/api/v1/reruns', {
    json: { ...body, reason, forceDownstream: flag(args, 'force-downstream'), dryRun },
  });
  if (ctx.json) return printJson(ctx, answer);
  if (dryRun) {
    const lines = answer.instances.filter((i): i is PlanLine => typeof i === 'object' && i !== null);
    ctx.io.out(`dry run: ${lines.length} instance${lines.length === 1 ? '' : 's'} would run; nothing was changed`);
    formatTable<PlanLine>(
      [
        { header: 'action', value: (l) => l.action },
        { header: 'id', value: (l) => l.id, align: 'right' },
        { header: 'task', value: (l) => l.taskName },
        { header: 'biz date', value: (l) => l.bizDate },
        { header: 'expected', value: (l) => l.expectedTime },
        { header: 'state', value: (l) => (l.from === undefined ? l.state : `${l.from} → ${l.state ?? '-'}`) },
        { header: 'run', value: (l) => l.runNo, align: 'right' },
      ],
      lines,
    ).forEach((l) => ctx.io.out(l));
    return;
  }
  const ids = answer.instances.map(String);
  const batchId = 'batchId' in answer ? answer.batchId : null;
  ctx.io.out(`rerun batch ${batchId ?? '-'}: ${ids.length} instance${ids.length === 1 ? '' : 's'} will run${ids.length === 0 ? '' : `: ${ids.join(', ')}`}`);
}

const instance: CommandSpec = {
  name: 'rerun instance',
  synopsis: '<id> --reason TEXT [--dry-run]',
  summary: 'Run a final instance again (same slot, original params, fresh attempts).',
  options: COMMON,
  run: async (ctx, args) => {
    const [id] = positionals(args, ['id'], ctx.command) as [string];
    if (!/^\d{1,20}$/.test(id)) throw new UsageError(`${ctx.command}: <id>: expected an instance id (digits), got ${JSON.stringify(id)}`);
    await send(ctx, args, { mode: 'instance', instanceId: id });
  },
};

const dag: CommandSpec = {
  name: 'rerun dag',
  synopsis: '--root T --biz-date D --reason TEXT [--force-downstream] [--dry-run]',
  summary: "Run the root's instance of a business date and every downstream instance of that date again, in dependency order.",
  options: {
    root: { type: 'string', value: 'T', help: 'root task' },
    'biz-date': { type: 'string', value: 'D', help: 'business date YYYY-MM-DD' },
    ...COMMON,
  },
  notes: ['Succeeded downstream instances are re-run only with --force-downstream (admin).'],
  run: async (ctx, args) => {
    positionals(args, [], ctx.command);
    const root = requiredOption(args, 'root', ctx.command);
    const date = bizDate('biz-date', requiredOption(args, 'biz-date', ctx.command));
    await send(ctx, args, { mode: 'dag', root, bizDate: date });
  },
};

const failed: CommandSpec = {
  name: 'rerun failed',
  synopsis: '[--root T] --biz-date D --reason TEXT [--dry-run]',
  summary: 'Run the FAILED and CANCELED instances of a business date again (under --root if given).',
  options: {
    root: { type: 'string', value: 'T', help: 'only this task and its downstream' },
    'biz-date': { type: 'string', value: 'D', help: 'business date YYYY-MM-DD' },
    ...COMMON,
  },
  run: async (ctx, args) => {
    positionals(args, [], ctx.command);
    const date = bizDate('biz-date', requiredOption(args, 'biz-date', ctx.command));
    const root = stringOption(args, 'root');
    await send(ctx, args, { mode: 'failed', bizDate: date, ...(root === undefined ? {} : { root }) });
  },
};

const backfill: CommandSpec = {
  name: 'rerun backfill',
  synopsis: '--task T --from D --to D [--concurrency N] --reason TEXT [--dry-run]',
  summary: 'One run per schedule fire whose business date lies in [from, to]: created where missing, re-run where final, oldest first.',
  options: {
    task: { type: 'string', value: 'T', help: 'task' },
    from: { type: 'string', value: 'D', help: 'first business date YYYY-MM-DD' },
    to: { type: 'string', value: 'D', help: 'last business date YYYY-MM-DD (inclusive)' },
    concurrency: { type: 'string', value: 'N', help: 'most running at once, 1..1000 (default 1)' },
    ...COMMON,
  },
  run: async (ctx, args) => {
    positionals(args, [], ctx.command);
    const task = requiredOption(args, 'task', ctx.command);
    const from = bizDate('from', requiredOption(args, 'from', ctx.command));
    const to = bizDate('to', requiredOption(args, 'to', ctx.command));
    if (from > to) throw new UsageError(`--to: ${to} is before --from ${from}`);
    const concurrency = stringOption(args, 'concurrency');
    await send(ctx, args, { mode: 'backfill', task, from, to, ...(concurrency === undefined ? {} : { concurrency: integer('concurrency', concurrency, 1, 1000) }) });
  },
};

export const rerunCommands: readonly CommandSpec[] = [instance, dag, failed, backfill];

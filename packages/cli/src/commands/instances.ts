/** `axctl instances list|get|cancel`. */
// CONVENTIONS: response types come from @ax/api-types (generated from admin-api's OpenAPI
// document, shared with the console), never written here.
import type { Execution, Instance, InstanceDetail, InstanceEvent, InstancePage } from '@ax/api-types';
import { bizDate, flag, instant, integer, positionals, stringOption, UsageError } from '../args.js';
import { oneLine } from '../client.js';
import { printJson, printMore, type CommandSpec, type Ctx } from '../command.js';
import { formatDuration, formatKeyValues, formatTable } from '../table.js';
import { teamName } from './teams.js';

/** `/api/v1/instances/{id}`. */
export const instancePath = (id: string): string => `/api/v1/instances/${encodeURIComponent(id)}`;

/** The key fields of an instance, one per line. */
export function instanceFields(i: Instance): Array<readonly [string, unknown]> {
  return [
    ['id', i.id],
    ['task', i.taskName],
    ['team', i.team],
    ['state', i.reason === null ? i.state : `${i.state} (${i.reason})`],
    // Why a due instance is not dispatched (the brokers' backlog scan; ADMIN-API "Waiting instances").
    ['waiting', i.waiting == null ? undefined : `${i.waiting.reason} since ${i.waiting.since}: ${i.waiting.message}`],
    ['biz date', i.bizDate],
    ['expected', i.expectedTime],
    ['trigger', i.trigger],
    ['run', i.runNo],
    ['attempt', `${i.attempt}/${i.maxAttempts}`],
    ['worker', i.workerId],
    ['params', Object.keys(i.params ?? {}).length > 0 ? i.params : undefined],
    ['created', i.createdAt],
    ['started', i.startedAt],
    ['ended', i.endedAt],
    ['duration', formatDuration(i.startedAt, i.endedAt)],
  ];
}

/** Prints the key fields of an instance. */
export function printInstanceSummary(ctx: Ctx, i: Instance): void {
  formatKeyValues(instanceFields(i)).forEach((l) => ctx.io.out(l));
}

const list: CommandSpec = {
  name: 'instances list',
  synopsis: '[--team NAME] [--task T] [--state S] [--biz-date D] [--from T] [--to T] [--limit N] [--cursor C]',
  summary: 'List instances, newest first (-w: redraw every 2 s until Ctrl-C).',
  notes: ['--team (global) lists only the instances of that team\'s tasks.'],
  options: {
    watch: { type: 'boolean', short: 'w', help: 'watch: redraw the list every 2 s until Ctrl-C (exit 0)' },
    task: { type: 'string', value: 'T', help: 'only instances of this task' },
    state: { type: 'string', value: 'S', help: 'only this state (or a comma list), e.g. FAILED,CANCELED' },
    'biz-date': { type: 'string', value: 'D', help: 'only this business date YYYY-MM-DD' },
    from: { type: 'string', value: 'T', help: 'expected time at or after (ISO-8601, or YYYY-MM-DD = its 00:00 UTC)' },
    to: { type: 'string', value: 'T', help: 'expected time before (ISO-8601, or YYYY-MM-DD)' },
    limit: { type: 'string', value: 'N', help: 'page size, 1..500 (default 50)' },
    cursor: { type: 'string', value: 'C', help: 'next page (printed after a full page)' },
  },
  run: async (ctx, args) => {
    positionals(args, [], ctx.command);
    const date = stringOption(args, 'biz-date');
    const from = stringOption(args, 'from');
    const to = stringOption(args, 'to');
    const limit = stringOption(args, 'limit');
    const team = ctx.team;
    const query = {
      team: team === undefined ? undefined : teamName('--team', team),
      task: stringOption(args, 'task'),
      state: stringOption(args, 'state')?.toUpperCase(),
      bizDate: date === undefined ? undefined : bizDate('biz-date', date),
      from: from === undefined ? undefined : instant('from', from),
      to: to === undefined ? undefined : instant('to', to),
      limit: limit === undefined ? undefined : integer('limit', limit, 1, 500),
      cursor: stringOption(args, 'cursor'),
    };
    if (!flag(args, 'watch')) return printInstances(ctx, (await ctx.client.get<InstancePage>('/api/v1/instances', query)).body);
    if (ctx.json) throw new UsageError(`${ctx.command}: -w redraws a table; it does not go with --json`);
    await watch(ctx, async () => {
      const { body } = await ctx.client.get<InstancePage>('/api/v1/instances', query);
      const lines: string[] = [];
      printInstances({ ...ctx, io: { ...ctx.io, out: (l) => void lines.push(l), err: (l) => void lines.push(l) } }, body);
      return lines;
    });
  },
};

/** Every `WATCH_INTERVAL_MS` (2 s) the lines of `draw`, after clearing the screen (a terminal) or a separator line. */
export const WATCH_INTERVAL_MS = 2_000;

/** Redraws until Ctrl-C (then returns: exit 0). A failed draw is one line and the next one is tried. */
export async function watch(ctx: Ctx, draw: () => Promise<string[]>): Promise<void> {
  while (!ctx.signal.aborted) {
    let lines: string[];
    try {
      lines = await draw();
    } catch (err) {
      if (ctx.signal.aborted) return;
      lines = [`axctl: ${ctx.command}: ${err instanceof Error ? oneLine(err.message) : String(err)} (retrying in 2s)`];
    }
    if (ctx.io.clear !== undefined) ctx.io.clear();
    else ctx.io.out(`--- ${new Date().toISOString()} (every 2s, Ctrl-C to stop)`);
    lines.forEach((l) => ctx.io.out(l));
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, WATCH_INTERVAL_MS);
      ctx.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
    });
  }
}

function printInstances(ctx: Ctx, body: InstancePage): void {
  if (ctx.json) return printJson(ctx, body);
  {
    formatTable<Instance>(
      [
        { header: 'id', value: (i) => i.id, align: 'right' },
        { header: 'task', value: (i) => i.taskName },
        { header: 'team', value: (i) => i.team },
        { header: 'biz date', value: (i) => i.bizDate },
        { header: 'expected', value: (i) => i.expectedTime },
        { header: 'state', value: (i) => i.state },
        { header: 'waiting', value: (i) => i.waiting?.reason },
        { header: 'attempt', value: (i) => `${i.attempt}/${i.maxAttempts}`, align: 'right' },
        { header: 'run', value: (i) => i.runNo, align: 'right' },
        { header: 'trigger', value: (i) => i.trigger },
        { header: 'worker', value: (i) => i.workerId },
        { header: 'duration', value: (i) => formatDuration(i.startedAt, i.endedAt), align: 'right' },
        { header: 'reason', value: (i) => i.reason, maxWidth: 40 },
      ],
      body.items,
    ).forEach((l) => ctx.io.out(l));
    printMore(ctx, body.nextCursor);
  }
}

/** One event as a table row / tail line. */
export function eventText(e: InstanceEvent): string {
  const parts = [e.workerId === undefined ? '' : `worker=${e.workerId}`, e.executionId === undefined ? '' : `exec=${e.executionId}`, e.message ?? ''];
  return parts.filter((p) => p !== '').join(' ');
}

const get: CommandSpec = {
  name: 'instances get',
  synopsis: '<id>',
  summary: 'Show one instance with its executions, events and output tail.',
  options: {},
  run: async (ctx, args) => {
    const [id] = positionals(args, ['id'], ctx.command) as [string];
    const { body: d } = await ctx.client.get<InstanceDetail>(instancePath(id));
    if (ctx.json) return printJson(ctx, d);
    printInstanceSummary(ctx, d);
    ctx.io.out('');
    ctx.io.out('Executions:');
    formatTable<Execution>(
      [
        { header: 'attempt', value: (e) => e.attempt, align: 'right' },
        { header: 'execution', value: (e) => e.executionId },
        { header: 'worker', value: (e) => e.workerId },
        { header: 'state', value: (e) => e.state },
        { header: 'dispatched', value: (e) => e.dispatchedAt },
        { header: 'duration', value: (e) => formatDuration(e.startedAt, e.endedAt), align: 'right' },
        { header: 'exit', value: (e) => e.exitCode, align: 'right' },
        { header: 'error', value: (e) => e.error ?? e.reason, maxWidth: 60 },
      ],
      d.executions ?? [],
    ).forEach((l) => ctx.io.out(`  ${l}`));
    ctx.io.out('');
    ctx.io.out('Events:');
    formatTable<InstanceEvent>(
      [
        { header: 'at', value: (e) => e.at },
        { header: 'type', value: (e) => e.type },
        { header: 'detail', value: eventText, maxWidth: 100 },
      ],
      d.events ?? [],
    ).forEach((l) => ctx.io.out(`  ${l}`));
    if (d.outputTail !== null && d.outputTail !== undefined && d.outputTail !== '') {
      ctx.io.out('');
      ctx.io.out('Output (tail):');
      // eslint-disable-next-line no-control-regex -- terminal escapes of the job's output are not replayed
      for (const line of d.outputTail.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '').split('\n')) ctx.io.out(`  ${line}`);
    }
  },
};

const cancel: CommandSpec = {
  name: 'instances cancel',
  synopsis: '<id>',
  summary: 'Cancel an instance; a running one is killed on its worker. A final instance cannot be canceled (409).',
  options: {},
  run: async (ctx, args) => {
    const [id] = positionals(args, ['id'], ctx.command) as [string];
    const { body } = await ctx.client.post<Instance>(`${instancePath(id)}/cancel`);
    if (ctx.json) return printJson(ctx, body);
    ctx.io.out(`instance ${body.id} (${body.taskName}) canceled: ${body.state}${body.reason === null ? '' : ` (${body.reason})`}`);
  },
};

export const instanceCommands: readonly CommandSpec[] = [list, get, cancel];

/** `axctl tasks list|get|apply|enable|disable|trigger`. */
import { readFile } from 'node:fs/promises';
import type { Instance, InstanceDetail, Task, TaskImport, TaskListItem, TaskPage } from '@ax/api-types';
import { bizDate, flag, integer, keyValues, listOption, positionals, requiredOption, stringOption, UsageError } from '../args.js';
import { ApiRequestError, oneLine } from '../client.js';
import { CommandFailed, printJson, printMore, type CommandSpec, type Ctx } from '../command.js';
import { describeExec, describeSchedule, EMPTY_CELL, formatDuration, formatKeyValues, formatTable } from '../table.js';
import { printInstanceSummary } from './instances.js';
import { executionsInOrder, followInstance } from './log-follow.js';
import { formatTaskYaml } from '@ax/core';
import { withTeam } from './team-yaml.js';
import { applyTeam } from './token-team.js';
import { teamName } from './teams.js';

const taskPath = (name: string): string => `/api/v1/tasks/${encodeURIComponent(name)}`;

const list: CommandSpec = {
  name: 'tasks list',
  synopsis: '[--team NAME] [--enabled true|false] [--tag T] [--q TEXT] [--limit N] [--cursor C]',
  summary: 'List tasks by name.',
  yaml: true,
  notes: ['--team (global) lists only the tasks of that team. -o yaml prints the page as one job file (a document per task, dependsOn included): an export to apply again.'],
  options: {
    enabled: { type: 'string', value: 'true|false', help: 'only enabled (true) or disabled (false) tasks' },
    tag: { type: 'string', value: 'T', help: 'only tasks carrying this tag' },
    q: { type: 'string', value: 'TEXT', help: 'substring of the name or description' },
    limit: { type: 'string', value: 'N', help: 'page size, 1..500 (default 50)' },
    cursor: { type: 'string', value: 'C', help: 'next page (printed after a full page)' },
  },
  run: async (ctx, args) => {
    positionals(args, [], ctx.command);
    const enabled = stringOption(args, 'enabled');
    if (enabled !== undefined && enabled !== 'true' && enabled !== 'false') throw new UsageError(`--enabled: expected true or false, got ${JSON.stringify(enabled)}`);
    const limit = stringOption(args, 'limit');
    const team = ctx.team;
    const { body } = await ctx.client.get<TaskPage>('/api/v1/tasks', {
      team: team === undefined ? undefined : teamName('--team', team),
      enabled,
      tag: stringOption(args, 'tag'),
      q: stringOption(args, 'q'),
      limit: limit === undefined ? undefined : integer('limit', limit, 1, 500),
      cursor: stringOption(args, 'cursor'),
    });
    if (ctx.json) return printJson(ctx, body);
    if (ctx.yaml === true) {
      if (body.items.length > 0) ctx.io.out(formatTaskYaml(body.items).replace(/\n$/, ''));
      printMore(ctx, body.nextCursor);
      return;
    }
    const lines = formatTable<TaskListItem>(
      [
        { header: 'name', value: (t) => t.name },
        { header: 'team', value: (t) => t.team },
        { header: 'enabled', value: (t) => (t.enabled === false ? 'no' : 'yes') },
        { header: 'schedule', value: (t) => describeSchedule(t.schedule), maxWidth: 40 },
        { header: 'exec', value: (t) => describeExec(t.exec), maxWidth: 50 },
        { header: 'next fire', value: (t) => t.nextFireTime },
        { header: 'last fire', value: (t) => t.lastFireTime },
        { header: 'version', value: (t) => t.version, align: 'right' },
      ],
      body.items,
    );
    lines.forEach((l) => ctx.io.out(l));
    printMore(ctx, body.nextCursor);
  },
};

const get: CommandSpec = {
  name: 'tasks get',
  synopsis: '<name> [-o table|json|yaml]',
  summary: 'Show one task (-o yaml: its definition as a job file, dependsOn included, to apply again).',
  options: {},
  yaml: true,
  run: async (ctx, args) => {
    const [name] = positionals(args, ['name'], ctx.command) as [string];
    const { body: t } = await ctx.client.get<Task>(taskPath(name));
    if (ctx.json) return printJson(ctx, t);
    if (ctx.yaml === true) return ctx.io.out(formatTaskYaml([t]).replace(/\n$/, ''));
    const retry = `max ${t.retry.max}, backoff ${t.retry.backoffSeconds}s ×${t.retry.factor} ±${t.retry.jitterSeconds}s`;
    const misfire = `${t.misfire.policy}${t.misfire.policy === 'catch_up' ? ` (max ${t.misfire.max})` : ''}`;
    formatKeyValues([
      ['name', t.name],
      ['team', t.team],
      ['description', t.description],
      ['owner', t.owner],
      ['enabled', t.enabled ? 'yes' : 'no'],
      ['schedule', describeSchedule(t.schedule)],
      ['exec', describeExec(t.exec)],
      ['params', Object.keys(t.params).length > 0 ? t.params : undefined],
      ['tags', t.tags],
      ['priority', t.priority],
      ['timeout', `${t.timeoutSeconds}s`],
      ['retry', retry],
      ['misfire', misfire],
      ['block', typeof t.block === 'object' ? `queue ${t.block.queue}` : t.block],
      ['route', t.route],
      ['max lateness', t.maxLatenessSeconds === null ? undefined : `${t.maxLatenessSeconds}s`],
      ['biz date offset', t.bizDateOffsetDays === 0 ? undefined : `${t.bizDateOffsetDays} days`],
      ['depends on', t.dependsOn === undefined || t.dependsOn.length === 0 ? undefined : t.dependsOn.map((p) => (p.rule === 'ALL_DONE' ? `${p.task} (ALL_DONE)` : p.task))],
      ['next fire', t.nextFireTime],
      ['last fire', t.lastFireTime],
      ['version', t.version],
      ['created', t.createdAt],
      ['updated', t.updatedAt],
    ]).forEach((l) => ctx.io.out(l));
  },
};

/** Reads the YAML to apply (`-` = stdin). */
async function readYaml(file: string): Promise<string> {
  if (file !== '-') return readFile(file, 'utf8');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks).toString('utf8');
}

const apply: CommandSpec = {
  name: 'tasks apply',
  synopsis: '-f FILE [--team NAME]',
  summary: 'Create or update the tasks of a YAML file (one or more `---` documents; all or nothing).',
  options: {
    file: { type: 'string', short: 'f', value: 'FILE', help: 'YAML file of task definitions (- = stdin)' },
  },
  notes: [
    'The global --team NAME is the team of every task that names none; a task naming another team is an error.',
    'For a folder, a diff, --dry-run and --prune, see `axctl apply`.',
    'Prints each task as created, updated or unchanged. An invalid file changes nothing: every problem is printed with its document and line.',
    'Without --team (and without `team:` in a document) a task belongs to team "default".',
  ],
  run: async (ctx, args) => {
    positionals(args, [], ctx.command);
    const file = requiredOption(args, 'file', ctx.command);
    let yaml: string;
    try {
      yaml = await readYaml(file);
    } catch (err) {
      const e = err as { code?: unknown; message?: unknown };
      const why = e.code === 'ENOENT' ? 'no such file' : e.code === 'EISDIR' ? 'it is a directory' : e.code === 'EACCES' ? 'permission denied' : oneLine(String(e.message));
      throw new CommandFailed(`${ctx.command}: cannot read ${file}: ${why}`);
    }
    const team = await applyTeam(ctx);
    if (team !== undefined) {
      const placed = withTeam(yaml, teamName('--team', team), { othersAllowed: ctx.team === undefined });
      if (!placed.ok) throw new CommandFailed(`${ctx.command}: ${file === '-' ? 'standard input' : file}: ${placed.message}; nothing was applied`);
      yaml = placed.yaml;
    }
    let body: TaskImport;
    try {
      body = (await ctx.client.post<typeof body>('/api/v1/tasks/import', { yaml })).body;
    } catch (err) {
      const issues = err instanceof ApiRequestError ? err.details['issues'] : undefined;
      if (err instanceof ApiRequestError && err.status === 400 && Array.isArray(issues) && issues.length > 0) {
        ctx.io.err(`axctl: ${ctx.command}: ${file === '-' ? 'standard input' : file} is not valid, nothing was applied (${err.status} ${err.code}):`);
        for (const issue of issues as Array<{ message?: unknown; path?: unknown }>) {
          ctx.io.err(`  ${oneLine(typeof issue.message === 'string' ? issue.message : JSON.stringify(issue))}`);
        }
        throw new CommandFailed(`${ctx.command}: ${file} is not valid`, { reported: true });
      }
      throw err;
    }
    if (ctx.json) return printJson(ctx, body);
    const rows = [
      ...body.created.map((name) => ({ name, result: 'created' })),
      ...body.updated.map((name) => ({ name, result: 'updated' })),
      ...body.unchanged.map((name) => ({ name, result: 'unchanged' })),
    ];
    formatTable<{ name: string; result: string }>([{ header: 'task', value: (r) => r.name }, { header: 'result', value: (r) => r.result }], rows).forEach((l) => ctx.io.out(l));
    ctx.io.out(`${body.created.length} created, ${body.updated.length} updated, ${body.unchanged.length} unchanged`);
  },
};

const switchTask = (action: 'enable' | 'disable'): CommandSpec => ({
  name: `tasks ${action}`,
  synopsis: '<name> [--reason TEXT]',
  summary: action === 'enable' ? 'Switch scheduling of a task on.' : 'Switch scheduling of a task off (running instances go on).',
  options: { reason: { type: 'string', value: 'TEXT', help: 'why (kept in the audit)' } },
  run: async (ctx, args) => {
    const [name] = positionals(args, ['name'], ctx.command) as [string];
    const reason = stringOption(args, 'reason');
    const { body } = await ctx.client.post<Task>(`${taskPath(name)}/${action}`, reason === undefined ? {} : { json: { reason } });
    if (ctx.json) return printJson(ctx, body);
    // A disabled task does not fire: "-", whatever an older server still answers.
    const next = action === 'disable' ? null : (body.nextFireTime ?? null);
    ctx.io.out(`task ${body.name} ${action}d (version ${body.version ?? '-'}, next fire ${next ?? '-'})`);
  },
});

/** One line on how a final instance ended: `instance 42 (nightly_report) FAILED (…) in 3.1s, attempt 2/2: exit code 1`. */
export function finalSummary(d: InstanceDetail): string {
  const last = executionsInOrder(d).at(-1);
  const why = last === undefined ? '' : last.error !== null && last.error !== '' ? `: ${oneLine(last.error)}` : last.exitCode !== null && last.exitCode !== 0 ? `: exit code ${last.exitCode}` : '';
  const took = formatDuration(d.startedAt, d.endedAt);
  return `instance ${d.id} (${d.taskName}) ${d.state}${d.reason === null ? '' : ` (${d.reason})`}${took === EMPTY_CELL ? '' : ` in ${took}`}, attempt ${d.attempt}/${d.maxAttempts}${d.state === 'SUCCESS' ? '' : why}`;
}

const trigger: CommandSpec = {
  name: 'tasks trigger',
  synopsis: '<name> [--param k=v …] [--biz-date D] [--idempotency-key K] [--wait [--follow] [--timeout DURATION]]',
  summary: 'Run a task now; prints the new instance (--wait: waits for its result and exits with it).',
  options: {
    param: { type: 'string', multiple: true, value: 'k=v', help: 'param merged over the task params (string value)' },
    'biz-date': { type: 'string', value: 'D', help: 'business date YYYY-MM-DD (default: from the time now)' },
    'idempotency-key': { type: 'string', value: 'K', help: 'a repeat with the same key within 24 h returns the same instance' },
    wait: { type: 'boolean', help: 'wait until the instance is final: exit 0 on SUCCESS, 1 otherwise, a summary line on stderr' },
    follow: { type: 'boolean', help: "implies --wait; prints the run's output on stdout as it runs, each retry's after the last" },
    timeout: { type: 'string', value: 'DURATION', help: 'with --wait: stop waiting after this long (90s, 30m, 2h; plain seconds too) and exit 124; the run goes on' },
  },
  notes: [
    'With --follow, stdout is only the job\'s output (both streams, as captured); the "triggered" line,',
    'a line per retry and the summary go to stderr. With --wait --json, the final instance is printed.',
    'Ctrl-C stops waiting (exit 130); the run goes on. --timeout stops waiting with exit 124 (as timeout(1)); the run goes on.',
    '',
    'In a CI pipeline:  axctl tasks trigger nightly_report --wait --follow',
  ],
  run: async (ctx, args) => {
    const [name] = positionals(args, ['name'], ctx.command) as [string];
    const follow = flag(args, 'follow');
    const wait = follow || flag(args, 'wait');
    const timeoutText = stringOption(args, 'timeout');
    if (timeoutText !== undefined && !wait) throw new UsageError(`${ctx.command}: --timeout goes with --wait or --follow`);
    const timeoutMs = timeoutText === undefined ? undefined : waitDurationMs('timeout', timeoutText);
    if (follow && ctx.json) throw new UsageError(`${ctx.command}: --follow prints the job's output on stdout; it does not go with --json`);
    const params = keyValues('param', listOption(args, 'param'));
    const date = stringOption(args, 'biz-date');
    const key = stringOption(args, 'idempotency-key');
    if (key !== undefined && !/^[\x21-\x7e]{1,255}$/.test(key)) throw new UsageError(`--idempotency-key: expected 1 to 255 visible ASCII characters, got ${JSON.stringify(key)}`);
    const { body, headers } = await ctx.client.post<Instance>(`${taskPath(name)}/trigger`, {
      json: { ...(Object.keys(params).length > 0 ? { params } : {}), ...(date === undefined ? {} : { bizDate: bizDate('biz-date', date) }) },
      ...(key === undefined ? {} : { headers: { 'idempotency-key': key } }),
    });
    if (ctx.json && !wait) return printJson(ctx, body);
    const replayed = headers.get('idempotent-replayed') === 'true';
    const triggered = replayed ? `task ${name}: instance ${body.id} already triggered with this idempotency key` : `task ${name} triggered: instance ${body.id}`;
    if (!wait) {
      ctx.io.out(triggered);
      printInstanceSummary(ctx, body);
      return;
    }
    if (follow) ctx.io.err(triggered);
    else if (!ctx.json) ctx.io.out(triggered);
    const final = await followWithin(ctx, body.id, follow, timeoutMs);
    if (typeof final === 'number') return final;
    if (ctx.json) printJson(ctx, final);
    const summary = finalSummary(final);
    ctx.io.err(summary);
    if (final.state !== 'SUCCESS') throw new CommandFailed(summary, { reported: true });
  },
};

/** `--timeout`: `90s`, `30m`, `2h` or plain seconds, 1 s to 7 days. */
export function waitDurationMs(option: string, text: string): number {
  const m = /^(\d{1,7})(s|m|h)?$/.exec(text.trim());
  const ms = m === null ? NaN : Number(m[1]) * ({ s: 1_000, m: 60_000, h: 3_600_000 } as const)[(m[2] ?? 's') as 's' | 'm' | 'h'];
  if (!(ms >= 1_000 && ms <= 7 * 86_400_000)) throw new UsageError(`--${option}: expected a duration from 1s to 7 days such as 90s, 30m or 2h, got ${JSON.stringify(text)}`);
  return ms;
}

/** Exit code of a wait that ran out of time (GNU timeout's). */
export const EXIT_TIMED_OUT = 124;

/**
 * Follows the instance to its end, or until `timeoutMs`: then says where it stands on stderr
 * and answers {@link EXIT_TIMED_OUT} (Ctrl-C stays exit 130: only the timer's abort is ours).
 */
async function followWithin(ctx: Ctx, instanceId: string, logs: boolean, timeoutMs: number | undefined): Promise<InstanceDetail | number> {
  if (timeoutMs === undefined) return followInstance(ctx, instanceId, { logs, view: 'all', fromCurrent: false });
  const timer = AbortSignal.timeout(timeoutMs);
  const signal = AbortSignal.any([ctx.signal, timer]);
  try {
    return await followInstance({ ...ctx, signal, client: ctx.client.withSignal(timer) }, instanceId, { logs, view: 'all', fromCurrent: false });
  } catch (err) {
    if (ctx.signal.aborted || !timer.aborted) throw err;
    const { body: now } = await ctx.client.get<InstanceDetail>(`/api/v1/instances/${encodeURIComponent(instanceId)}`);
    ctx.io.err(`axctl: ${ctx.command}: instance ${instanceId} is still ${now.state} after ${timeoutMs / 1000} s; stopped waiting, the run goes on (axctl instances get ${instanceId})`);
    return EXIT_TIMED_OUT;
  }
}

const remove: CommandSpec = {
  name: 'tasks delete',
  synopsis: '<name>',
  summary: 'Delete a task (its edges go too; its instances stay). Needs an admin token.',
  options: {},
  run: async (ctx, args) => {
    const [name] = positionals(args, ['name'], ctx.command) as [string];
    await ctx.client.request<undefined>('DELETE', taskPath(name));
    if (ctx.json) return printJson(ctx, { deleted: name });
    ctx.io.out(`task ${name} deleted`);
  },
};

export const taskCommands: readonly CommandSpec[] = [list, get, apply, remove, switchTask('enable'), switchTask('disable'), trigger];

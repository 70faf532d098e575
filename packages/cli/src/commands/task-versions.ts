/** `axctl tasks versions|diff|rollback`: a task's kept definitions (#47 "Task versions"). */
import type { Task, TaskVersion, TaskVersionPage } from '@ax/api-types';
import { diffHunks, diffLines, diffStats, formatTaskYaml } from '@ax/core';
import { integer, positionals, requiredOption, stringOption } from '../args.js';
import { printJson, printMore, type CommandSpec, type Ctx } from '../command.js';
import { EMPTY_CELL, formatTable } from '../table.js';

const versionsPath = (name: string): string => `/api/v1/tasks/${encodeURIComponent(name)}/versions`;
/** Task versions are unsigned 32-bit integers on the server. */
const MAX_VERSION = 4_294_967_295;

const versions: CommandSpec = {
  name: 'tasks versions',
  synopsis: '<name> [--limit N] [--cursor C]',
  summary: 'List the kept definitions of a task, newest first (version, when, who).',
  notes: ['Who is the token name that saved it; "-" is the system (pauseAfterFailures, a calendar change) or a save from before versions were kept.'],
  options: {
    limit: { type: 'string', value: 'N', help: 'page size, 1..500 (default 50)' },
    cursor: { type: 'string', value: 'C', help: 'next page (printed after a full page)' },
  },
  run: async (ctx, args) => {
    const [name] = positionals(args, ['name'], ctx.command) as [string];
    const limit = stringOption(args, 'limit');
    const { body } = await ctx.client.get<TaskVersionPage>(versionsPath(name), {
      limit: limit === undefined ? undefined : integer('limit', limit, 1, 500),
      cursor: stringOption(args, 'cursor'),
    });
    if (ctx.json) return printJson(ctx, body);
    formatTable<TaskVersion>(
      [
        { header: 'version', value: (v) => v.version, align: 'right' },
        { header: 'at', value: (v) => v.at },
        { header: 'by', value: (v) => v.actor ?? EMPTY_CELL },
        { header: 'enabled', value: (v) => (v.definition.enabled === false ? 'no' : 'yes') },
        { header: 'description', value: (v) => v.definition.description, maxWidth: 50 },
      ],
      body.items,
    ).forEach((l) => ctx.io.out(l));
    printMore(ctx, body.nextCursor);
  },
};

/** The YAML of one kept version of `name` (as `tasks get -o yaml` prints a task). */
async function versionYaml(ctx: Ctx, name: string, version: number): Promise<string> {
  const { body } = await ctx.client.get<TaskVersion>(`${versionsPath(name)}/${version}`);
  return formatTaskYaml([body.definition]);
}

const diff: CommandSpec = {
  name: 'tasks diff',
  synopsis: '<name> --from V --to W',
  summary: 'Show what changed in a task between two kept versions (a line diff of their YAML).',
  notes: ['Lines removed from V start with "-", lines added in W with "+"; unchanged stretches are folded.'],
  options: {
    from: { type: 'string', value: 'V', help: 'the older version' },
    to: { type: 'string', value: 'W', help: 'the newer version' },
  },
  run: async (ctx, args) => {
    const [name] = positionals(args, ['name'], ctx.command) as [string];
    const from = integer('from', requiredOption(args, 'from', ctx.command), 1, MAX_VERSION);
    const to = integer('to', requiredOption(args, 'to', ctx.command), 1, MAX_VERSION);
    const lines = diffLines(await versionYaml(ctx, name, from), await versionYaml(ctx, name, to));
    const { added, removed } = diffStats(lines);
    if (ctx.json) return printJson(ctx, { task: name, from, to, added, removed, lines });
    ctx.io.out(`--- ${name} version ${from}`);
    ctx.io.out(`+++ ${name} version ${to}`);
    for (const hunk of diffHunks(lines)) {
      if (hunk.skipped > 0) ctx.io.out(`@@ ${hunk.skipped} unchanged line${hunk.skipped === 1 ? '' : 's'} @@`);
      for (const l of hunk.lines) ctx.io.out(`${l.kind === 'add' ? '+' : l.kind === 'del' ? '-' : ' '}${l.text}`);
    }
    ctx.io.out(added + removed === 0 ? 'no differences' : `${added} added, ${removed} removed`);
  },
};

const rollback: CommandSpec = {
  name: 'tasks rollback',
  synopsis: '<name> --version V [--reason TEXT]',
  summary: 'Save a kept definition of a task again, as its new version (audited; edges stay as they are).',
  notes: ['Rolling back to a definition equal to the current one changes nothing.'],
  options: {
    version: { type: 'string', value: 'V', help: 'the kept version to restore (see axctl tasks versions)' },
    reason: { type: 'string', value: 'TEXT', help: 'why (audited)' },
  },
  run: async (ctx, args) => {
    const [name] = positionals(args, ['name'], ctx.command) as [string];
    const version = integer('version', requiredOption(args, 'version', ctx.command), 1, MAX_VERSION);
    const reason = stringOption(args, 'reason');
    const { body } = await ctx.client.post<Task>(`/api/v1/tasks/${encodeURIComponent(name)}/rollback`, {
      json: { version, ...(reason === undefined ? {} : { reason }) },
    });
    if (ctx.json) return printJson(ctx, body);
    ctx.io.out(`task ${body.name} is at the definition of version ${version} (now version ${body.version})`);
  },
};

export const taskVersionCommands: readonly CommandSpec[] = [versions, diff, rollback];

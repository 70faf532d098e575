/**
 * `axctl apply -f FILE|DIR [--prune] [--dry-run]`: jobs as code. Reads every document of the
 * file (or of every *.yaml / *.yml of the folder), validates them, compares them with the
 * server (create / change with the fields / unchanged / delete with --prune), prints that, has
 * the API check the whole import (parents, cycles across files, teams) as a dry run, and then
 * sends it as ONE import: all or nothing for the whole folder, prune included.
 * Exit 0: nothing to do, or applied; 1: invalid or refused, nothing applied; 3: --dry-run with changes.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
// CONVENTIONS: response types come from @ax/api-types (generated from the OpenAPI document).
import type { TaskImport as ImportAnswer, TaskPage } from '@ax/api-types';
import { DEFAULT_MANAGED_BY, MANAGED_BY_PATTERN, parseTaskYaml, type TaskDefinition } from '@ax/core';
import { flag, positionals, requiredOption, stringOption, UsageError } from '../args.js';
import { ApiRequestError, oneLine } from '../client.js';
import { CommandFailed, printJson, type CommandSpec, type Ctx } from '../command.js';
import { diffTasks, hasChanges, summarize, type TaskDiff } from '../apply-diff.js';
import { formatTable } from '../table.js';
import { withTeam } from './team-yaml.js';
import { applyTeam, tokenTeams } from './token-team.js';

/** Exit code of `apply --dry-run` when applying would change something. */
export const EXIT_DRY_RUN_CHANGES = 3;

/** One document of the files, with where it came from. */
interface Doc {
  readonly file: string;
  readonly document: number;
  readonly definition: TaskDefinition;
}

const readError = (file: string, err: unknown): string => {
  const e = err as { code?: unknown; message?: unknown };
  const why = e.code === 'ENOENT' ? 'no such file or folder' : e.code === 'EACCES' ? 'permission denied' : oneLine(String(e.message));
  return `cannot read ${file}: ${why}`;
};

/** The job files named by `-f`: the file, or every *.yaml / *.yml of the folder (not its subfolders), by name. */
export async function jobFiles(target: string): Promise<string[]> {
  const info = await stat(target);
  if (!info.isDirectory()) return [target];
  const names = (await readdir(target)).filter((n) => /\.ya?ml$/.test(n)).sort();
  return names.map((n) => path.join(target, n));
}

/** Reads and validates every document; throws after printing every problem. */
async function readDocs(ctx: Ctx, target: string, team: string | undefined): Promise<Doc[]> {
  let files: string[];
  try {
    files = await jobFiles(target);
  } catch (err) {
    throw new CommandFailed(`${ctx.command}: ${readError(target, err)}`);
  }
  if (files.length === 0) throw new CommandFailed(`${ctx.command}: ${target} holds no *.yaml or *.yml file; nothing was applied`);
  const docs: Doc[] = [];
  const problems: string[] = [];
  const firstOf = new Map<string, string>();
  for (const file of files) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      throw new CommandFailed(`${ctx.command}: ${readError(file, err)}`);
    }
    if (team !== undefined) {
      const placed = withTeam(text, team, { othersAllowed: ctx.team === undefined });
      if (!placed.ok) throw new CommandFailed(`${ctx.command}: ${file}: ${placed.message}; nothing was applied`);
      text = placed.yaml;
    }
    const parsed = parseTaskYaml(text, file);
    if (!parsed.ok) {
      problems.push(...parsed.issues.map((i) => (i.line === undefined ? i.message : `${i.message} (line ${i.line})`)));
      continue;
    }
    parsed.value.forEach((definition, index) => {
      const where = `${file} document ${index + 1}`;
      const first = firstOf.get(definition.name);
      if (first !== undefined) problems.push(`${where}: name: task ${JSON.stringify(definition.name)} is already defined in ${first}`);
      else firstOf.set(definition.name, where);
      docs.push({ file, document: index + 1, definition });
    });
  }
  if (problems.length === 0 && docs.length === 0) problems.push(`${target}: no task definition in the files`);
  if (problems.length > 0) {
    ctx.io.err(`axctl: ${ctx.command}: ${target} is not valid, nothing was applied:`);
    problems.forEach((p) => ctx.io.err(`  ${oneLine(p)}`));
    throw new CommandFailed(`${ctx.command}: not valid`, { reported: true });
  }
  return docs;
}

/** Every task the token sees (all pages). */
async function remoteTasks(ctx: Ctx): Promise<Array<Record<string, unknown>>> {
  const all: Array<Record<string, unknown>> = [];
  let cursor: string | undefined;
  do {
    const { body } = await ctx.client.get<TaskPage>('/api/v1/tasks', { limit: 500, cursor });
    all.push(...body.items);
    cursor = body.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return all;
}

/** An API refusal of the import, with "document N" of the joined import put back to its file. */
function reportRefusal(ctx: Ctx, err: ApiRequestError, docs: readonly Doc[], target: string): never {
  const where = (message: string): string =>
    message.replace(/^document (\d+): /, (whole, n: string) => {
      const doc = docs[Number(n) - 1];
      return doc === undefined ? whole : `${doc.file} document ${doc.document}: `;
    });
  const issues = err.details['issues'];
  const message = err.message.replace(/ \(\d{3} [A-Z_]+\)$/, '');
  const cycle = err.details['cycle'];
  ctx.io.err(`axctl: ${ctx.command}: ${target}: ${err.code === 'CYCLE' ? where(message) : 'refused'}, nothing was applied (${err.status} ${err.code})${Array.isArray(issues) && issues.length > 0 ? ':' : ''}`);
  if (Array.isArray(issues)) {
    for (const issue of issues as Array<{ message?: unknown }>) ctx.io.err(`  ${oneLine(where(typeof issue.message === 'string' ? issue.message : JSON.stringify(issue)))}`);
  } else if (err.code !== 'CYCLE') {
    ctx.io.err(`  ${message}`);
  }
  if (Array.isArray(cycle)) {
    const files = [...new Set(cycle.map((name) => docs.find((d) => d.definition.name === name)?.file).filter((f): f is string => f !== undefined))];
    if (files.length > 0) ctx.io.err(`  the cycle runs through ${files.join(', ')}`);
  }
  throw new CommandFailed(`${ctx.command}: refused`, { reported: true });
}

function printDiff(ctx: Ctx, diff: readonly TaskDiff[]): void {
  const word = { create: 'create', change: 'change', delete: 'delete', unchanged: 'unchanged' } as const;
  formatTable<TaskDiff>(
    [
      { header: 'action', value: (d) => word[d.action] },
      { header: 'task', value: (d) => d.name },
      { header: 'team', value: (d) => d.team },
      { header: 'changes', value: (d) => d.fields, maxWidth: 80 },
    ],
    diff,
  ).forEach((l) => ctx.io.out(l));
  // Then what each change does, value by value: `  nightly.timeoutSeconds: 600 → 900`.
  for (const d of diff) for (const c of d.changes ?? []) ctx.io.out(`  ${d.name}.${c.path}: ${c.from ?? '(none)'} → ${c.to ?? '(none)'}`);
}

export const applyCommand: CommandSpec = {
  name: 'apply',
  synopsis: '-f FILE|DIR [--prune] [--dry-run] [--team NAME]',
  summary: 'Make the server match job files: print the diff per task, then apply it as one import (all or nothing).',
  options: {
    file: { type: 'string', short: 'f', value: 'FILE|DIR', help: 'a YAML job file, or a folder: every *.yaml / *.yml in it' },
    prune: { type: 'boolean', help: 'also delete the tasks of this source (--source) no file names, of --team (or the token\'s teams); listed first (admin token)' },
    source: { type: 'string', value: 'NAME', help: `the marker stored on every task applied, which --prune deletes by (default ${DEFAULT_MANAGED_BY}); one per repository of job files` },
    'all-teams': { type: 'boolean', help: 'with --prune and a token of every team ("*") but no --team: prune in every team' },
    'dry-run': { type: 'boolean', help: 'print the diff and check it with the API; change nothing (exit 3 if there are changes)' },
  },
  notes: [
    'Every document of every file is validated, then the API checks the whole set (parents named in',
    'dependsOn, cycles across files, teams) before anything is written; one import writes it all, or nothing.',
    'With --team (or a token of exactly one team), a document without `team:` gets that team (one naming another team is an error).',
    'Every task applied carries the marker of --source (managedBy); --prune deletes only tasks carrying it, so a task',
    'made in the console, or applied from another --source, is never pruned. A token of every team prunes only',
    'with --team NAME, or with --all-teams.',
    'Exit codes: 0 nothing to do or applied, 1 invalid or refused (nothing applied), 2 usage, 3 --dry-run with changes.',
    '',
    'In CI:  axctl apply -f jobs/ --prune --dry-run; axctl apply -f jobs/ --prune',
  ],
  run: async (ctx, args) => {
    positionals(args, [], ctx.command);
    const target = requiredOption(args, 'file', ctx.command);
    const prune = flag(args, 'prune');
    const dryRun = flag(args, 'dry-run');
    const source = stringOption(args, 'source') ?? DEFAULT_MANAGED_BY;
    if (!MANAGED_BY_PATTERN.test(source)) throw new UsageError(`--source: expected 1 to 128 letters, digits and . _ : / @ -, got ${JSON.stringify(source)}`);
    const allTeams = flag(args, 'all-teams');
    if (allTeams && !prune) throw new UsageError(`${ctx.command}: --all-teams goes with --prune`);
    if (allTeams && ctx.team !== undefined) throw new UsageError(`${ctx.command}: --all-teams and --team exclude each other`);
    const teams = ctx.team === undefined ? await tokenTeams(ctx) : undefined;
    // A token of every team without --team would prune every team's tasks of this source: said out loud only.
    if (prune && teams?.includes('*') === true && !allTeams) {
      throw new UsageError(`${ctx.command}: --prune with a token of every team ("*") needs --team NAME, or --all-teams to prune in every team`);
    }
    const team = await applyTeam(ctx, teams);
    const docs = await readDocs(ctx, target, team);
    const remote = await remoteTasks(ctx);
    const diff = diffTasks(
      docs.map((d) => d.definition as unknown as Record<string, unknown>),
      remote,
      { prune, managedBy: source, ...(team === undefined ? {} : { inScope: (of: string) => of === team }) },
    );
    const deletions = diff.filter((d) => d.action === 'delete');
    if (prune && !ctx.json) {
      const scope = `${team === undefined ? "the token's teams" : `team ${team}`} applied from source ${source}`;
      ctx.io.out(deletions.length === 0 ? `--prune: no task of ${scope} is left out of the files` : `--prune: ${deletions.length} task(s) of ${scope} named in no file will be deleted: ${deletions.map((d) => d.name).join(', ')}`);
    }
    const yaml = docs.map((d) => JSON.stringify(d.definition)).join('\n---\n');
    const query = { prune: prune ? 'true' : undefined, team: prune ? team : undefined, managedBy: source };
    let checked: ImportAnswer;
    try {
      checked = (await ctx.client.post<ImportAnswer>('/api/v1/tasks/import', { yaml, query: { ...query, dryRun: 'true' } })).body;
    } catch (err) {
      if (err instanceof ApiRequestError && (err.status === 400 || err.status === 409)) reportRefusal(ctx, err, docs, target);
      throw err;
    }
    // The API's answer is the truth: a task the files leave as it is but whose edges move is a change.
    const serverChanged = new Set([...checked.created, ...checked.updated, ...(checked.deleted ?? [])]);
    const shown = diff.map((d) => (d.action === 'unchanged' && serverChanged.has(d.name) ? { ...d, action: 'change' as const, fields: ['dependsOn'] } : d));
    const counts = summarize(shown);
    const changes = hasChanges(shown);
    if (ctx.json && (dryRun || !changes)) printJson(ctx, { diff: shown, dryRun, result: checked });
    if (!ctx.json) {
      printDiff(ctx, shown);
      ctx.io.out(`${counts.create} to create, ${counts.change} to change, ${counts.delete} to delete, ${counts.unchanged} unchanged`);
    }
    if (!changes) {
      if (!ctx.json) ctx.io.out('nothing to do');
      return 0;
    }
    if (dryRun) {
      if (!ctx.json) ctx.io.out('dry run: the API accepted it; nothing was applied');
      return EXIT_DRY_RUN_CHANGES;
    }
    let applied: ImportAnswer;
    try {
      applied = (await ctx.client.post<ImportAnswer>('/api/v1/tasks/import', { yaml, query })).body;
    } catch (err) {
      if (err instanceof ApiRequestError && (err.status === 400 || err.status === 409)) reportRefusal(ctx, err, docs, target);
      throw err;
    }
    if (ctx.json) {
      printJson(ctx, { diff: shown, dryRun: false, result: applied });
      return 0;
    }
    ctx.io.out(`applied: ${applied.created.length} created, ${applied.updated.length} changed, ${(applied.deleted ?? []).length} deleted, ${applied.unchanged.length} unchanged`);
    return 0;
  },
};

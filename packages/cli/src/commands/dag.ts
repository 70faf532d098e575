/** `axctl edges add|rm|list` and `axctl dag show ROOT [--biz-date D]` (a tree with instance states). */
import { bizDate, positionals, stringOption, UsageError } from '../args.js';
import { printJson, type CommandSpec, type Ctx } from '../command.js';
import { formatTable } from '../table.js';
import type { DagEdge, DagGraph as Dag, Instance, InstancePage } from '@ax/api-types';

const RULES = ['ALL_SUCCESS', 'ALL_DONE'];

const add: CommandSpec = {
  name: 'edges add',
  synopsis: '<parent> <child> [--rule ALL_SUCCESS|ALL_DONE]',
  summary: 'Add a DAG edge: the child runs after the parent of the same business date (refused if it closes a cycle).',
  options: { rule: { type: 'string', value: 'RULE', help: 'ALL_SUCCESS (default: every parent succeeded) or ALL_DONE (every parent final)' } },
  notes: ['A task whose job file names `dependsOn` owns its incoming edges: the next `axctl apply` puts them back as the file says.'],
  run: async (ctx, args) => {
    const [parent, child] = positionals(args, ['parent', 'child'], ctx.command) as [string, string];
    const rule = stringOption(args, 'rule')?.toUpperCase() ?? 'ALL_SUCCESS';
    if (!RULES.includes(rule)) throw new UsageError(`--rule: expected ALL_SUCCESS or ALL_DONE, got ${JSON.stringify(rule)}`);
    const { body } = await ctx.client.post<DagEdge>('/api/v1/edges', { json: { parent, child, rule } });
    if (ctx.json) return printJson(ctx, body);
    ctx.io.out(`edge ${body.parent} → ${body.child} added (${body.rule})`);
  },
};

const rm: CommandSpec = {
  name: 'edges rm',
  synopsis: '<parent> <child>',
  summary: 'Remove a DAG edge.',
  options: {},
  run: async (ctx, args) => {
    const [parent, child] = positionals(args, ['parent', 'child'], ctx.command) as [string, string];
    await ctx.client.request<undefined>('DELETE', '/api/v1/edges', { query: { parent, child } });
    if (ctx.json) return printJson(ctx, { parent, child, removed: true });
    ctx.io.out(`edge ${parent} → ${child} removed`);
  },
};

const list: CommandSpec = {
  name: 'edges list',
  synopsis: '[--task T]',
  summary: 'List the DAG edges the token sees (--task: only those from or to T).',
  options: { task: { type: 'string', value: 'T', help: 'only the edges of this task (its parents and children)' } },
  run: async (ctx, args) => {
    positionals(args, [], ctx.command);
    const task = stringOption(args, 'task');
    const { body } = await ctx.client.get<Dag>('/api/v1/dag');
    const edges = body.edges.filter((e) => task === undefined || e.parent === task || e.child === task);
    if (ctx.json) return printJson(ctx, { items: edges });
    formatTable<DagEdge>(
      [
        { header: 'parent', value: (e) => e.parent },
        { header: 'child', value: (e) => e.child },
        { header: 'rule', value: (e) => e.rule },
      ],
      edges,
    ).forEach((l) => ctx.io.out(l));
  },
};

/** The newest instance of a task (of `date` if given), or null. */
async function latestInstance(ctx: Ctx, task: string, date: string | undefined): Promise<Instance | null> {
  const { body } = await ctx.client.get<InstancePage>('/api/v1/instances', { task, bizDate: date, limit: 1 });
  return body.items[0] ?? null;
}

/** The tree lines of a DAG from `root` (pure): a node reached twice is printed once, then `(see above)`. */
export function treeLines(root: string, edges: readonly DagEdge[], label: (task: string) => string): string[] {
  const children = new Map<string, DagEdge[]>();
  for (const e of edges) children.set(e.parent, [...(children.get(e.parent) ?? []), e]);
  const lines = [label(root)];
  const shown = new Set([root]);
  const walk = (node: string, indent: string): void => {
    const kids = [...(children.get(node) ?? [])].sort((a, b) => (a.child < b.child ? -1 : 1));
    kids.forEach((e, i) => {
      const last = i === kids.length - 1;
      const rule = e.rule === 'ALL_DONE' ? ' [ALL_DONE]' : '';
      const again = shown.has(e.child);
      lines.push(`${indent}${last ? '└─ ' : '├─ '}${label(e.child)}${rule}${again ? ' (see above)' : ''}`);
      if (again) return;
      shown.add(e.child);
      walk(e.child, `${indent}${last ? '   ' : '│  '}`);
    });
  };
  walk(root, '');
  return lines;
}

const show: CommandSpec = {
  name: 'dag show',
  synopsis: '<root> [--biz-date D]',
  summary: "Show the DAG below a task as a tree, with each task's instance state for one business date.",
  options: { 'biz-date': { type: 'string', value: 'D', help: "business date YYYY-MM-DD (default: that of the root's newest instance)" } },
  run: async (ctx, args) => {
    const [root] = positionals(args, ['root'], ctx.command) as [string];
    const given = stringOption(args, 'biz-date');
    const { body: dag } = await ctx.client.get<Dag>('/api/v1/dag', { root });
    const date = given === undefined ? (await latestInstance(ctx, root, undefined))?.bizDate : bizDate('biz-date', given);
    const states = new Map<string, Instance | null>();
    for (const node of dag.nodes) states.set(node, date === undefined ? null : await latestInstance(ctx, node, date));
    if (ctx.json) return printJson(ctx, { root, bizDate: date ?? null, nodes: dag.nodes.map((n) => ({ task: n, instance: states.get(n) ?? null })), edges: dag.edges });
    ctx.io.out(date === undefined ? `${root}: no instance yet` : `biz date ${date}`);
    const label = (task: string): string => {
      const i = states.get(task);
      if (date === undefined) return task;
      return i === null || i === undefined ? `${task}  (no instance)` : `${task}  ${i.state}${i.reason === null ? '' : ` (${i.reason})`}  #${i.id}`;
    };
    treeLines(root, dag.edges, label).forEach((l) => ctx.io.out(l));
  },
};

export const dagCommands: readonly CommandSpec[] = [add, rm, list, show];

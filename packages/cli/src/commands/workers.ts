/** `axctl workers [list]` and `axctl workers drain <id>`. */
import type { ResponseOf, Worker as ApiWorker, WorkerPage } from '@ax/api-types';
import { positionals } from '../args.js';
import { printJson, type CommandSpec } from '../command.js';
import { formatMs, formatTable } from '../table.js';

/**
 * A worker of the registry. The server also sends `version`, which the route's response schema
 * does not declare (yet): added here, optional.
 */
type Worker = ApiWorker & { version?: string };
type WorkerList = Omit<WorkerPage, 'items'> & { items: Worker[] };

const list: CommandSpec = {
  name: 'workers',
  synopsis: '[list]',
  summary: 'List live workers (the registry).',
  options: {},
  run: async (ctx, args) => {
    positionals(args, [], ctx.command);
    const { body } = await ctx.client.get<WorkerList>('/api/v1/workers');
    if (ctx.json) return printJson(ctx, body);
    formatTable<Worker>(
      [
        { header: 'id', value: (w) => w.id },
        { header: 'host', value: (w) => w.host },
        { header: 'state', value: (w) => w.state },
        { header: 'running', value: (w) => `${w.running}/${w.slots}`, align: 'right' },
        { header: 'cores', value: (w) => w.cores, align: 'right' },
        { header: 'avg', value: (w) => formatMs(w.avgDurationMs), align: 'right' },
        { header: 'tags', value: (w) => w.tags },
        { header: 'version', value: (w) => w.version },
        { header: 'last heartbeat', value: (w) => w.lastHeartbeat },
      ],
      body.items,
    ).forEach((l) => ctx.io.out(l));
  },
};

const drain: CommandSpec = {
  name: 'workers drain',
  synopsis: '<id>',
  summary: 'Stop routing new work to a worker (what it runs finishes).',
  options: {},
  run: async (ctx, args) => {
    const [id] = positionals(args, ['id'], ctx.command) as [string];
    const { body } = await ctx.client.post<ResponseOf<'POST /api/v1/workers/{id}/drain'>>(`/api/v1/workers/${encodeURIComponent(id)}/drain`);
    if (ctx.json) return printJson(ctx, body);
    ctx.io.out(`worker ${body.id} ${body.state}: no new work is routed to it`);
  },
};

export const workerCommands: readonly CommandSpec[] = [list, drain];

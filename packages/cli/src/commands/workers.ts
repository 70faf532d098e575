/** `axctl workers [list]`, `axctl workers drain <id>` and `axctl workers undrain <id>`. */
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

/** `workers drain` and `workers undrain`: one shape, the API's answer printed as a sentence. */
function drainCommand(action: 'drain' | 'undrain', summary: string, says: string): CommandSpec {
  return {
    name: `workers ${action}`,
    synopsis: '<id>',
    summary,
    options: {},
    run: async (ctx, args) => {
      const [id] = positionals(args, ['id'], ctx.command) as [string];
      const { body } = await ctx.client.post<ResponseOf<'POST /api/v1/workers/{id}/drain'> | ResponseOf<'POST /api/v1/workers/{id}/undrain'>>(
        `/api/v1/workers/${encodeURIComponent(id)}/${action}`,
      );
      if (ctx.json) return printJson(ctx, body);
      ctx.io.out(`worker ${body.id} ${body.state}: ${says}`);
    },
  };
}

const drain = drainCommand('drain', 'Stop routing new work to a worker (what it runs finishes; the drain ends when that worker process exits).', 'no new work is routed to it');
const undrain = drainCommand('undrain', 'Route new work to a drained worker again.', 'new work is routed to it again');

export const workerCommands: readonly CommandSpec[] = [list, drain, undrain];

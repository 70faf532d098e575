/**
 * `axctl status` and `axctl dispatch [show|pause|resume]` (ADMIN-API `GET /status`, the global
 * pause; issue #47): what an operator checks first, and the switch with its reason.
 */
import type { ResponseOf } from '@ax/api-types';
import { positionals, stringOption } from '../args.js';
import { printJson, type CommandSpec } from '../command.js';
import { formatKeyValues } from '../table.js';

type Pause = ResponseOf<'GET /api/v1/dispatch'>;

/** `paused since … by … — reason`, or `running`. */
export function pauseText(p: Pause): string {
  if (!p.paused) return 'running';
  const parts = ['PAUSED'];
  if (p.since !== undefined) parts.push(`since ${p.since}`);
  if (p.by !== undefined) parts.push(`by ${p.by}`);
  return p.reason === undefined ? parts.join(' ') : `${parts.join(' ')}: ${p.reason}`;
}

const status: CommandSpec = {
  name: 'status',
  synopsis: '',
  summary: "The platform at a glance for the token's teams: dispatch paused or not, workers live and draining, backlog, late runs.",
  options: {},
  notes: ['backlog: due instances that wait (see `axctl instances get ID` for why each waits); late: those due for more than 60 s.'],
  run: async (ctx, args) => {
    positionals(args, [], ctx.command);
    const { body } = await ctx.client.get<ResponseOf<'GET /api/v1/status'>>('/api/v1/status');
    if (ctx.json) return printJson(ctx, body);
    formatKeyValues([
      ['dispatch', pauseText(body.dispatch)],
      ['workers', `${body.workers.live} live, ${body.workers.draining} draining`],
      ['backlog', body.backlog.waiting === 0 ? '0 waiting' : `${body.backlog.waiting} waiting, oldest due ${body.backlog.oldestDueSeconds} s ago`],
      ['late', body.late],
    ]).forEach((l) => ctx.io.out(l));
  },
};

const show: CommandSpec = {
  name: 'dispatch show',
  synopsis: '',
  summary: 'Whether dispatching is paused, since when, by whom and why.',
  options: {},
  run: async (ctx, args) => {
    positionals(args, [], ctx.command);
    const { body } = await ctx.client.get<Pause>('/api/v1/dispatch');
    if (ctx.json) return printJson(ctx, body);
    ctx.io.out(`dispatch ${pauseText(body)}`);
  },
};

/** `dispatch pause` and `dispatch resume` (admin of every team). */
function switchCommand(action: 'pause' | 'resume', summary: string): CommandSpec {
  return {
    name: `dispatch ${action}`,
    synopsis: action === 'pause' ? '[--reason TEXT]' : '',
    summary,
    options: action === 'pause' ? { reason: { type: 'string', value: 'TEXT', help: 'why (audited; shown by `axctl status` and the console while paused)' } } : {},
    run: async (ctx, args) => {
      positionals(args, [], ctx.command);
      const reason = action === 'pause' ? stringOption(args, 'reason') : undefined;
      const { body } = await ctx.client.post<Pause>(`/api/v1/dispatch/${action}`, reason === undefined ? {} : { json: { reason } });
      if (ctx.json) return printJson(ctx, body);
      ctx.io.out(`dispatch ${pauseText(body)}`);
    },
  };
}

export const statusCommands: readonly CommandSpec[] = [
  status,
  show,
  switchCommand('pause', 'Stop all dispatching (a token of every team, admin): due work waits with reason DISPATCH_PAUSED.'),
  switchCommand('resume', 'Start dispatching again.'),
];

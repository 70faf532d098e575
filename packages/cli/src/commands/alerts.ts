/**
 * `axctl alerts list`: the alerts raised, newest first, with their delivery state (`GET
 * /api/v1/alerts`). The API has no single-alert read and no acknowledgement (yet): the list
 * with its filters is what there is.
 */
import type { Alert, AlertPage } from '@ax/api-types';
import { instant, integer, positionals, stringOption, UsageError } from '../args.js';
import { printJson, printMore, type CommandSpec } from '../command.js';
import { formatTable } from '../table.js';

const DELIVERY = ['pending', 'sent', 'failed', 'not_configured'];

/** `sent`, `failed (platform: gave_up)`: the state and, when a route failed, which. */
function deliveryText(a: Alert): string {
  const failing = a.routes.filter((r) => r.state !== 'sent').map((r) => `${r.route} ${r.target}: ${r.state}`);
  return failing.length === 0 ? a.delivery : `${a.delivery} (${failing.join('; ')})`;
}

const list: CommandSpec = {
  name: 'alerts list',
  synopsis: '[--kind K] [--task T] [--severity S] [--delivery D] [--from T] [--to T] [--limit N] [--cursor C]',
  summary: "Alerts raised, newest first, of the token's teams, with how their delivery went.",
  options: {
    kind: { type: 'string', value: 'K', help: 'only this kind (or a comma list), e.g. FINAL_FAILURE,LOST_WORKER' },
    task: { type: 'string', value: 'T', help: 'only alerts of this task' },
    severity: { type: 'string', value: 'S', help: 'critical or warning' },
    delivery: { type: 'string', value: 'D', help: 'pending, sent, failed or not_configured' },
    from: { type: 'string', value: 'T', help: 'raised at or after (ISO-8601, or YYYY-MM-DD = its 00:00 UTC)' },
    to: { type: 'string', value: 'T', help: 'raised before (ISO-8601, or YYYY-MM-DD)' },
    limit: { type: 'string', value: 'N', help: 'page size, 1..500 (default 50)' },
    cursor: { type: 'string', value: 'C', help: 'next page (printed after a full page)' },
  },
  notes: ['delivery: not_configured means no AX_ALERT_WEBHOOK_URL and no team route: the alert was only logged.'],
  run: async (ctx, args) => {
    positionals(args, [], ctx.command);
    const severity = stringOption(args, 'severity');
    if (severity !== undefined && !['critical', 'warning'].includes(severity)) throw new UsageError(`--severity: expected critical or warning, got ${JSON.stringify(severity)}`);
    const delivery = stringOption(args, 'delivery');
    if (delivery !== undefined && !DELIVERY.includes(delivery)) throw new UsageError(`--delivery: expected one of ${DELIVERY.join(', ')}, got ${JSON.stringify(delivery)}`);
    const from = stringOption(args, 'from');
    const to = stringOption(args, 'to');
    const limit = stringOption(args, 'limit');
    const { body } = await ctx.client.get<AlertPage>('/api/v1/alerts', {
      kind: stringOption(args, 'kind')?.toUpperCase(),
      task: stringOption(args, 'task'),
      severity,
      delivery,
      from: from === undefined ? undefined : instant('from', from),
      to: to === undefined ? undefined : instant('to', to),
      limit: limit === undefined ? undefined : integer('limit', limit, 1, 500),
      cursor: stringOption(args, 'cursor'),
    });
    if (ctx.json) return printJson(ctx, body);
    formatTable<Alert>(
      [
        { header: 'id', value: (a) => a.id, align: 'right' },
        { header: 'at', value: (a) => a.at },
        { header: 'kind', value: (a) => a.kind },
        { header: 'severity', value: (a) => a.severity },
        { header: 'team', value: (a) => a.team },
        { header: 'task', value: (a) => a.taskName },
        { header: 'instance', value: (a) => a.instanceId, align: 'right' },
        { header: 'worker', value: (a) => a.workerId },
        { header: 'delivery', value: deliveryText, maxWidth: 50 },
        { header: 'message', value: (a) => a.message, maxWidth: 80 },
      ],
      body.items,
    ).forEach((l) => ctx.io.out(l));
    printMore(ctx, body.nextCursor);
  },
};

export const alertCommands: readonly CommandSpec[] = [list];

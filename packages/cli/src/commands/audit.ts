/** `axctl audit list`: who did what through the API, newest first (`GET /api/v1/audit`, admin). */
import type { AuditEntry, AuditPage } from '@ax/api-types';
import { instant, integer, positionals, stringOption } from '../args.js';
import { printJson, printMore, type CommandSpec } from '../command.js';
import { formatTable } from '../table.js';

/** The fields an entry changed, `field: old → new` (a create or delete: its side alone). */
export function changeText(e: Pick<AuditEntry, 'before' | 'after'>): string {
  const obj = (v: unknown): Record<string, unknown> | null => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null);
  const before = obj(e.before);
  const after = obj(e.after);
  if (before === null || after === null) return e.after !== undefined ? JSON.stringify(e.after) : e.before !== undefined ? `was ${JSON.stringify(e.before)}` : '';
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]));
  return keys.map((k) => `${k}: ${JSON.stringify(before[k]) ?? '-'} → ${JSON.stringify(after[k]) ?? '-'}`).join('; ');
}

const list: CommandSpec = {
  name: 'audit list',
  synopsis: '[--actor NAME] [--from T] [--to T] [--limit N] [--cursor C]',
  summary: "Audit entries, newest first, of the token's teams (an admin token; global entries for tokens of every team).",
  options: {
    actor: { type: 'string', value: 'NAME', help: 'only entries of this token name' },
    from: { type: 'string', value: 'T', help: 'at or after (ISO-8601, or YYYY-MM-DD = its 00:00 UTC)' },
    to: { type: 'string', value: 'T', help: 'before (ISO-8601, or YYYY-MM-DD)' },
    limit: { type: 'string', value: 'N', help: 'page size, 1..500 (default 50)' },
    cursor: { type: 'string', value: 'C', help: 'next page (printed after a full page)' },
  },
  notes: ['The change column names each changed field with its old and new value; --json prints before and after whole.'],
  run: async (ctx, args) => {
    positionals(args, [], ctx.command);
    const from = stringOption(args, 'from');
    const to = stringOption(args, 'to');
    const limit = stringOption(args, 'limit');
    const { body } = await ctx.client.get<AuditPage>('/api/v1/audit', {
      actor: stringOption(args, 'actor'),
      from: from === undefined ? undefined : instant('from', from),
      to: to === undefined ? undefined : instant('to', to),
      limit: limit === undefined ? undefined : integer('limit', limit, 1, 500),
      cursor: stringOption(args, 'cursor'),
    });
    if (ctx.json) return printJson(ctx, body);
    formatTable<AuditEntry>(
      [
        { header: 'id', value: (e) => e.id, align: 'right' },
        { header: 'at', value: (e) => e.at },
        { header: 'actor', value: (e) => e.actor.name },
        { header: 'action', value: (e) => e.action },
        { header: 'target', value: (e) => e.target, maxWidth: 40 },
        { header: 'team', value: (e) => e.team },
        { header: 'reason', value: (e) => e.reason, maxWidth: 40 },
        { header: 'change', value: changeText, maxWidth: 80 },
      ],
      body.items,
    ).forEach((l) => ctx.io.out(l));
    printMore(ctx, body.nextCursor);
  },
};

export const auditCommands: readonly CommandSpec[] = [list];

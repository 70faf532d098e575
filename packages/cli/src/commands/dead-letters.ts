/**
 * `axctl dead-letters list`: poison messages the brokers set aside, newest first (`GET
 * /api/v1/dead-letters`, a token of every team). The API offers no replay: a dead letter is
 * read here to find what sent it.
 */
import type { DeadLetter, DeadLetterPage } from '@ax/api-types';
import { integer, positionals, stringOption } from '../args.js';
import { printJson, printMore, type CommandSpec } from '../command.js';
import { formatTable } from '../table.js';

const list: CommandSpec = {
  name: 'dead-letters list',
  synopsis: '[--limit N] [--cursor C]',
  summary: 'Messages that failed validation, newest first, with the queue they came from and why (a token of every team).',
  options: {
    limit: { type: 'string', value: 'N', help: 'page size, 1..500 (default 50)' },
    cursor: { type: 'string', value: 'C', help: 'next page (printed after a full page)' },
  },
  notes: ['--json prints each payload and its headers whole.'],
  run: async (ctx, args) => {
    positionals(args, [], ctx.command);
    const limit = stringOption(args, 'limit');
    const { body } = await ctx.client.get<DeadLetterPage>('/api/v1/dead-letters', {
      limit: limit === undefined ? undefined : integer('limit', limit, 1, 500),
      cursor: stringOption(args, 'cursor'),
    });
    if (ctx.json) return printJson(ctx, body);
    formatTable<DeadLetter>(
      [
        { header: 'id', value: (d) => d.id, align: 'right' },
        { header: 'at', value: (d) => d.at },
        { header: 'queue', value: (d) => d.sourceQueue },
        { header: 'reason', value: (d) => d.reason, maxWidth: 60 },
        { header: 'payload', value: (d) => d.payload, maxWidth: 60 },
      ],
      body.items,
    ).forEach((l) => ctx.io.out(l));
    printMore(ctx, body.nextCursor);
  },
};

export const deadLetterCommands: readonly CommandSpec[] = [list];

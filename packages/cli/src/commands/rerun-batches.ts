/**
 * `axctl reruns list|get|watch|cancel`: the batches `axctl rerun …` started (`GET
 * /api/v1/reruns`, `GET /api/v1/reruns/{batchId}` and its `/instances`, `POST
 * /api/v1/reruns/{batchId}/cancel`). A batch counts every instance it touches, the downstream
 * runs of a DAG backfill included (#47), so `watch` ends when the last of them is final.
 */
import type { Instance, RerunBatch, RerunBatchInstancePage, RerunBatchPage } from '@ax/api-types';
import { integer, positionals, stringOption, UsageError } from '../args.js';
import { CommandFailed, printJson, printMore, type CommandSpec, type Ctx } from '../command.js';
import { cell, formatDuration, formatKeyValues, formatTable } from '../table.js';
import { EXIT_TIMED_OUT, waitDurationMs } from './tasks.js';
import { WATCH_INTERVAL_MS } from './instances.js';

/** `/api/v1/reruns/{batchId}`. */
const batchPath = (id: string): string => `/api/v1/reruns/${encodeURIComponent(id)}`;

function batchId(ctx: Ctx, args: Parameters<CommandSpec['run']>[1]): string {
  const [id] = positionals(args, ['batch-id'], ctx.command) as [string];
  if (!/^\d{1,20}$/.test(id)) throw new UsageError(`${ctx.command}: <batch-id>: expected a batch id (digits), got ${JSON.stringify(id)}`);
  return id;
}

/** `7/12 (58%)`. */
function progressText(b: RerunBatch): string {
  return `${b.finished}/${b.total} (${Math.floor(b.progress * 100)}%)`;
}

/** The non-zero counts: `SUCCESS 5, RUNNING 1`. */
function countsText(b: RerunBatch): string {
  const parts = Object.entries(b.counts).filter(([, n]) => n > 0).map(([s, n]) => `${s} ${n}`);
  return parts.length === 0 ? '-' : parts.join(', ');
}

/** What the batch did, the target of its request: `backfill daily 2026-11-01..2026-11-07`. */
function targetText(b: RerunBatch): string {
  const r = b.request;
  const text = (k: string): string => (typeof r[k] === 'string' || typeof r[k] === 'number' ? String(r[k]) : '');
  switch (b.mode) {
    case 'backfill':
      return `${text('task')} ${text('from')}..${text('to')}`;
    case 'instance':
      return `instance ${text('instanceId')}`;
    default:
      return `${text('root') === '' ? '*' : text('root')} @ ${text('bizDate')}`;
  }
}

const list: CommandSpec = {
  name: 'reruns list',
  synopsis: '[--mode M] [--limit N] [--cursor C]',
  summary: "Rerun and backfill batches of the token's teams, newest first.",
  options: {
    mode: { type: 'string', value: 'M', help: 'only batches of this mode: instance, dag, failed, backfill' },
    limit: { type: 'string', value: 'N', help: 'page size, 1..500 (default 50)' },
    cursor: { type: 'string', value: 'C', help: 'next page (printed after a full page)' },
  },
  run: async (ctx, args) => {
    positionals(args, [], ctx.command);
    const mode = stringOption(args, 'mode');
    if (mode !== undefined && !['instance', 'dag', 'failed', 'backfill'].includes(mode)) {
      throw new UsageError(`--mode: expected instance, dag, failed or backfill, got ${JSON.stringify(mode)}`);
    }
    const limit = stringOption(args, 'limit');
    const { body } = await ctx.client.get<RerunBatchPage>('/api/v1/reruns', {
      mode,
      limit: limit === undefined ? undefined : integer('limit', limit, 1, 500),
      cursor: stringOption(args, 'cursor'),
    });
    if (ctx.json) return printJson(ctx, body);
    formatTable<RerunBatch>(
      [
        { header: 'id', value: (b) => b.id, align: 'right' },
        { header: 'mode', value: (b) => b.mode },
        { header: 'target', value: targetText, maxWidth: 50 },
        { header: 'state', value: (b) => b.state },
        { header: 'progress', value: progressText, align: 'right' },
        { header: 'failed', value: (b) => b.counts.FAILED + b.counts.CANCELED, align: 'right' },
        { header: 'actor', value: (b) => b.actor },
        { header: 'created', value: (b) => b.createdAt },
        { header: 'reason', value: (b) => b.reason, maxWidth: 40 },
      ],
      body.items,
    ).forEach((l) => ctx.io.out(l));
    printMore(ctx, body.nextCursor);
  },
};

function printBatch(ctx: Ctx, b: RerunBatch): void {
  formatKeyValues([
    ['id', b.id],
    ['mode', b.mode],
    ['target', targetText(b)],
    ['state', b.state],
    ['progress', progressText(b)],
    ['counts', countsText(b)],
    ['concurrency', b.concurrency],
    ['force downstream', b.forceDownstream ? 'yes' : undefined],
    ['reason', b.reason],
    ['actor', b.actor],
    ['created', b.createdAt],
    ['canceled', b.canceledAt === null ? undefined : `${b.canceledAt} by ${b.canceledBy ?? '-'}`],
  ]).forEach((l) => ctx.io.out(l));
}

const get: CommandSpec = {
  name: 'reruns get',
  synopsis: '<batch-id>',
  summary: 'Show one batch: its state, progress, counts by state and its instances (downstream runs included).',
  options: {},
  run: async (ctx, args) => {
    const id = batchId(ctx, args);
    const [{ body: batch }, { body: instances }] = await Promise.all([
      ctx.client.get<RerunBatch>(batchPath(id)),
      ctx.client.get<RerunBatchInstancePage>(`${batchPath(id)}/instances`, { limit: 500 }),
    ]);
    if (ctx.json) return printJson(ctx, { ...batch, instances: instances.items });
    printBatch(ctx, batch);
    ctx.io.out('');
    ctx.io.out('Instances:');
    formatTable<Instance>(
      [
        { header: 'id', value: (i) => i.id, align: 'right' },
        { header: 'task', value: (i) => i.taskName },
        { header: 'biz date', value: (i) => i.bizDate },
        { header: 'state', value: (i) => (i.reason === null ? i.state : `${i.state} (${i.reason})`) },
        { header: 'run', value: (i) => i.runNo, align: 'right' },
        { header: 'attempt', value: (i) => `${i.attempt}/${i.maxAttempts}`, align: 'right' },
        { header: 'duration', value: (i) => formatDuration(i.startedAt, i.endedAt), align: 'right' },
      ],
      instances.items,
    ).forEach((l) => ctx.io.out(`  ${l}`));
    if (instances.nextCursor !== null) ctx.io.out(`  … more (axctl reruns get ${id} --json, or GET ${batchPath(id)}/instances)`);
  },
};

/** Sleeps `ms`, or less when Ctrl-C comes. */
function pause(ctx: Ctx, ms: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    ctx.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });
}

/** A batch that ended with every instance SUCCESS. */
function succeeded(b: RerunBatch): boolean {
  return b.state === 'done' && b.counts.FAILED === 0 && b.counts.CANCELED === 0;
}

const watch: CommandSpec = {
  name: 'reruns watch',
  synopsis: '<batch-id> [--timeout DURATION]',
  summary: 'Follow a batch until it ends: a line when its progress changes; exit 0 when every instance succeeded, 1 otherwise.',
  options: {
    timeout: { type: 'string', value: 'DURATION', help: 'stop watching after this long (90s, 30m, 2h; plain seconds too) and exit 124; the batch goes on' },
  },
  notes: [
    `Polls the batch every ${WATCH_INTERVAL_MS / 1000} s. Ends when it is done (exit 0 if every instance succeeded,`,
    '1 if one failed or was canceled) or canceled (exit 1). Ctrl-C stops watching (exit 130); the batch goes on.',
    'With --json, the final batch is printed.',
  ],
  run: async (ctx, args) => {
    const id = batchId(ctx, args);
    const timeoutText = stringOption(args, 'timeout');
    const deadline = timeoutText === undefined ? undefined : Date.now() + waitDurationMs('timeout', timeoutText);
    let last = '';
    for (;;) {
      const { body: b } = await ctx.client.get<RerunBatch>(batchPath(id));
      const line = `batch ${b.id}: ${b.state} ${progressText(b)}: ${countsText(b)}`;
      if (line !== last && !ctx.json) ctx.io.err(line);
      last = line;
      if (b.state !== 'running') {
        if (ctx.json) printJson(ctx, b);
        if (succeeded(b)) return;
        throw new CommandFailed(`batch ${b.id} ${b.state === 'canceled' ? 'was canceled' : 'ended with failed or canceled instances'}: ${countsText(b)}`);
      }
      if (deadline !== undefined && Date.now() + WATCH_INTERVAL_MS > deadline) {
        await pause(ctx, Math.max(0, deadline - Date.now()));
        if (ctx.signal.aborted) throw new Error('interrupted');
        ctx.io.err(`axctl: ${ctx.command}: batch ${id} is still running after ${timeoutText ?? ''}; stopped watching, the batch goes on (axctl reruns get ${id})`);
        return EXIT_TIMED_OUT;
      }
      await pause(ctx, WATCH_INTERVAL_MS);
      if (ctx.signal.aborted) throw new Error('interrupted');
    }
  },
};

const cancel: CommandSpec = {
  name: 'reruns cancel',
  synopsis: '<batch-id> [--reason TEXT]',
  summary: 'Stop a batch: its instances not yet started (downstream runs included) are canceled; running ones finish.',
  options: { reason: { type: 'string', value: 'TEXT', help: 'why (written to the audit log)' } },
  run: async (ctx, args) => {
    const id = batchId(ctx, args);
    const reason = stringOption(args, 'reason');
    const { body } = await ctx.client.post<RerunBatch & { canceled: string[] }>(`${batchPath(id)}/cancel`, { json: reason === undefined ? {} : { reason } });
    if (ctx.json) return printJson(ctx, body);
    ctx.io.out(`batch ${body.id} canceled: ${body.canceled.length} instance${body.canceled.length === 1 ? '' : 's'} not yet started canceled${body.canceled.length === 0 ? '' : ` (${cell(body.canceled)})`}`);
    printBatch(ctx, body);
  },
};

export const rerunBatchCommands: readonly CommandSpec[] = [list, get, watch, cancel];

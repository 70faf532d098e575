/**
 * Pure logic of the batch pages: a batch's counts as the segments of a stacked progress bar,
 * whether a batch is still moving (poll it), and the backfill dialog's choices as a request.
 */
import type { InstanceState } from '../types';
import type { BatchState, RerunBatch } from './types';

/** Bar and legend order: finished first (left), then what runs, then what waits. */
export const SEGMENT_ORDER: readonly InstanceState[] = ['SUCCESS', 'FAILED', 'CANCELED', 'RUNNING', 'DISPATCHED', 'RETRY_WAIT', 'PENDING', 'WAITING'];

const FINAL: ReadonlySet<InstanceState> = new Set<InstanceState>(['SUCCESS', 'FAILED', 'CANCELED']);

export interface Segment {
  state: InstanceState;
  count: number;
  /** Share of the total, 0 to 100 (percent of the bar's width). */
  percent: number;
}

/** The non-empty states of `counts` in {@link SEGMENT_ORDER}, each with its share of their sum. */
export function segmentsOf(counts: Partial<Record<InstanceState, number>>): Segment[] {
  const total = SEGMENT_ORDER.reduce((sum, s) => sum + Math.max(0, counts[s] ?? 0), 0);
  if (total === 0) return [];
  return SEGMENT_ORDER.filter((s) => (counts[s] ?? 0) > 0).map((state) => {
    const count = counts[state] ?? 0;
    return { state, count, percent: (count / total) * 100 };
  });
}

/** Instances in a final state (SUCCESS, FAILED, CANCELED). */
export function finishedOf(counts: Partial<Record<InstanceState, number>>): number {
  return SEGMENT_ORDER.filter((s) => FINAL.has(s)).reduce((sum, s) => sum + (counts[s] ?? 0), 0);
}

/** `5 / 7 finished` */
export function progressText(batch: Pick<RerunBatch, 'counts' | 'total'>): string {
  return `${finishedOf(batch.counts)} / ${batch.total} finished`;
}

/**
 * Whether the page should keep polling: while the batch runs, and while a canceled batch still
 * has instances that have not ended (its running ones finish after the cancel).
 */
export function isMoving(batch: { state: BatchState; counts: Partial<Record<InstanceState, number>>; total: number }): boolean {
  if (batch.state === 'running') return true;
  if (batch.state === 'canceled') return finishedOf(batch.counts) < batch.total;
  return false;
}

/** What a batch re-ran, in one line (a backfill names its task and range). */
export function batchTarget(batch: Pick<RerunBatch, 'mode' | 'request'>): string {
  const r = batch.request;
  const str = (k: string): string | undefined => (typeof r[k] === 'string' ? r[k] : undefined);
  switch (batch.mode) {
    case 'backfill':
      return `${str('task') ?? '?'} ${str('from') ?? '?'} … ${str('to') ?? '?'}`;
    case 'instance':
      return `instance #${str('instanceId') ?? '?'}`;
    case 'dag':
      return `${str('root') ?? '?'} and downstream, ${str('bizDate') ?? '?'}`;
    case 'failed':
      return `failed${str('root') === undefined ? '' : ` under ${str('root') ?? ''}`}, ${str('bizDate') ?? '?'}`;
  }
}

/** The backfill dialog's fields as typed. */
export interface BackfillChoices {
  from: string;
  to: string;
  concurrency: string;
  reason: string;
}

const BIZ_DATE = /^\d{4}-\d{2}-\d{2}$/;

/** The first problem with the choices (to show before asking the API), or null. */
export function backfillProblem(c: BackfillChoices): string | null {
  if (!BIZ_DATE.test(c.from) || Number.isNaN(Date.parse(`${c.from}T00:00:00Z`))) return 'From: a business date YYYY-MM-DD is required.';
  if (!BIZ_DATE.test(c.to) || Number.isNaN(Date.parse(`${c.to}T00:00:00Z`))) return 'To: a business date YYYY-MM-DD is required.';
  if (c.to < c.from) return 'To must not be before From.';
  if (!/^\d{1,4}$/.test(c.concurrency.trim()) || Number(c.concurrency) < 1 || Number(c.concurrency) > 1000) return 'Concurrency: a whole number from 1 to 1000.';
  if (c.reason.trim() === '') return 'A reason is required: it is written to the audit log.';
  return null;
}

/** The `POST /api/v1/reruns` body of a backfill (ADMIN-API.md "Reruns"). */
export function backfillBody(task: string, c: BackfillChoices, dryRun: boolean): Record<string, unknown> {
  return { mode: 'backfill', task, from: c.from, to: c.to, concurrency: Number(c.concurrency.trim()), reason: c.reason.trim(), dryRun };
}

/** A biz date `days` before `date` (both `YYYY-MM-DD`, calendar days). */
export function daysBefore(date: string, days: number): string {
  const t = Date.parse(`${date}T00:00:00Z`) - days * 86_400_000;
  return new Date(t).toISOString().slice(0, 10);
}

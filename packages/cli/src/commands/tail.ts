/**
 * `axctl tail [--instance ID] [--task T]`: follows events by polling — one instance's detail,
 * or the instance list (of a task, or of all) and the detail of every instance that is new,
 * not final, or changed state — and prints each event once, as it appears, until Ctrl-C or
 * `--timeout`. An unreachable API or a 5xx is reported once and retried; any other error ends
 * it (exit 1).
 */
import type { InstanceState } from '@ax/core';
import { positionals, secondsToMs, stringOption, UsageError } from '../args.js';
import { ApiRequestError, NetworkError } from '../client.js';
import type { CommandSpec, Ctx } from '../command.js';
import { cell } from '../table.js';
import type { Instance, InstanceDetail, InstanceEvent, InstancePage } from '@ax/api-types';
import { eventText, instancePath } from './instances.js';

/** Default time between polls, ms. */
export const DEFAULT_POLL_INTERVAL_MS = 2000;

/** Instances of the list polled in list mode (the newest). */
const LIST_LIMIT = 100;

/**
 * Final states (core's `FINAL_STATES`; not imported at run time: loading @ax/core — zod,
 * cron-parser — would double the CLI's start-up time, and only its types are needed).
 */
export const FINAL_STATES: ReadonlySet<string> = new Set<InstanceState>(['SUCCESS', 'FAILED', 'CANCELED']);

/** What is known of one followed instance. */
interface Followed {
  state: string;
  /** Events already printed (or skipped as history): the first `seen` of the list. */
  seen: number | null;
  /** When `seen` is unknown: events at or before this instant are history. */
  historyUntil: string | null;
}

/** Resolves after `ms`, or at once when the signal is aborted. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

function printEvent(ctx: Ctx, inst: Pick<Instance, 'id' | 'taskName'>, e: InstanceEvent): void {
  if (ctx.json) ctx.io.out(JSON.stringify({ instanceId: inst.id, taskName: inst.taskName, ...e }));
  else ctx.io.out(`${e.at}  ${inst.id}  ${inst.taskName}  ${e.type}${eventText(e) === '' ? '' : `  ${cell(eventText(e))}`}`);
}

/** Prints the events of a detail not printed yet; returns how many there are now. */
function printNew(ctx: Ctx, d: InstanceDetail, f: Followed | undefined): number {
  const events = d.events ?? [];
  let from = f?.seen ?? 0;
  if (f !== undefined && f.seen === null) {
    const until = f.historyUntil;
    from = until === null ? events.length : events.filter((e) => e.at <= until).length;
  }
  for (const e of events.slice(from)) printEvent(ctx, d, e);
  return events.length;
}

/** The polling loop: when to go on, how long to wait, and requests that survive outages. */
interface Loop {
  readonly ctx: Ctx;
  /** False once Ctrl-C or the timeout came. */
  running(): boolean;
  /** Waits one poll interval (less near the timeout). */
  wait(): Promise<void>;
  /** Runs a request; a network error or a 5xx is reported once and answers null (retried at the next poll). */
  request<T>(send: () => Promise<T>): Promise<T | null>;
}

function createLoop(ctx: Ctx, intervalMs: number, timeoutMs: number | undefined): Loop {
  const deadline = timeoutMs === undefined ? Infinity : Date.now() + timeoutMs;
  const stop = timeoutMs === undefined ? ctx.signal : AbortSignal.any([ctx.signal, AbortSignal.timeout(timeoutMs)]);
  let outage = false;
  return {
    ctx,
    running: () => !stop.aborted && Date.now() < deadline,
    wait: () => sleep(Math.min(intervalMs, Math.max(deadline - Date.now(), 0)), stop),
    request: async <T>(send: () => Promise<T>): Promise<T | null> => {
      try {
        const result = await send();
        if (outage) ctx.io.err(`axctl: ${ctx.command}: ${ctx.client.baseUrl} answers again`);
        outage = false;
        return result;
      } catch (err) {
        if (ctx.signal.aborted) return null;
        const transient = err instanceof NetworkError || (err instanceof ApiRequestError && err.status >= 500);
        if (!transient) throw err;
        if (!outage) ctx.io.err(`axctl: ${ctx.command}: ${err.message}; retrying`);
        outage = true;
        return null;
      }
    },
  };
}

async function followInstance(loop: Loop, id: string): Promise<void> {
  const { ctx } = loop;
  let seen = 0;
  while (loop.running()) {
    const d = await loop.request(() => ctx.client.get<InstanceDetail>(instancePath(id)));
    if (d !== null) seen = printNew(ctx, d.body, { state: d.body.state, seen, historyUntil: null });
    await loop.wait();
  }
}

async function followList(loop: Loop, task: string | undefined): Promise<void> {
  const { ctx } = loop;
  const known = new Map<string, Followed>();
  let first = true;
  while (loop.running()) {
    const page = await loop.request(() => ctx.client.get<InstancePage>('/api/v1/instances', { task, limit: LIST_LIMIT }));
    if (page !== null) {
      for (const inst of [...page.body.items].reverse()) {
        const f = known.get(inst.id);
        const isFinal = FINAL_STATES.has(inst.state);
        if (first && isFinal) {
          // history: what ended before tail started is not printed; a later rerun is
          known.set(inst.id, { state: inst.state, seen: null, historyUntil: inst.endedAt ?? inst.createdAt });
          continue;
        }
        if (f !== undefined && isFinal && f.state === inst.state && f.seen !== null) continue;
        const d = await loop.request(() => ctx.client.get<InstanceDetail>(instancePath(inst.id)));
        if (d === null) continue;
        const seen = first ? (d.body.events ?? []).length : printNew(ctx, d.body, f);
        known.set(inst.id, { state: d.body.state, seen, historyUntil: null });
      }
      first = false;
    }
    await loop.wait();
  }
}

export const tailCommand: CommandSpec = {
  name: 'tail',
  synopsis: '[--instance ID] [--task T] [--interval S] [--timeout S]',
  summary: 'Follow instance events as they happen, until Ctrl-C (or --timeout).',
  options: {
    instance: { type: 'string', value: 'ID', help: "one instance: its events so far, then new ones" },
    task: { type: 'string', value: 'T', help: 'only instances of this task (default: all)' },
    interval: { type: 'string', value: 'S', help: 'seconds between polls (default 2)' },
    timeout: { type: 'string', value: 'S', help: 'stop after S seconds (exit 0); for scripts' },
  },
  notes: [
    'Without --instance, events of instances that ended before tail started are not shown;',
    'everything that happens from then on is, including reruns. --json prints one JSON event per',
    'line with its instanceId and taskName.',
  ],
  run: async (ctx, args) => {
    positionals(args, [], ctx.command);
    const instance = stringOption(args, 'instance');
    const task = stringOption(args, 'task');
    const interval = stringOption(args, 'interval');
    const timeout = stringOption(args, 'timeout');
    if (instance !== undefined && task !== undefined) throw new UsageError(`${ctx.command}: give --instance or --task, not both`);
    const intervalMs = interval === undefined ? DEFAULT_POLL_INTERVAL_MS : secondsToMs('interval', interval);
    const loop = createLoop(ctx, intervalMs, timeout === undefined ? undefined : secondsToMs('timeout', timeout));
    if (instance !== undefined) await followInstance(loop, instance);
    else await followList(loop, task);
  },
};

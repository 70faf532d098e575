/**
 * Reading a run's output (ADMIN-API.md "Job output (logs)"), shared by `axctl logs` and
 * `axctl tasks trigger --wait --follow`:
 * - {@link printPages}: the bytes stored so far, by paging `GET …/log` (`X-Ax-Log-Next-Offset`
 *   jumps the bytes a truncated output dropped) until `X-Ax-Log-Size`, written to stdout as they are;
 * - {@link followExecution}: then the SSE stream `GET …/log/stream` from there until its `end`
 *   event; a dropped connection (or a 5xx, or 45 s without even a ping) is reported once on
 *   stderr and resumed with `Last-Event-ID`;
 * - {@link followInstance}: one execution after another (a retry is the next attempt's log)
 *   until the instance is final.
 */
import { ApiRequestError, NetworkError } from '../client.js';
import { CommandFailed, type Ctx } from '../command.js';
import { SseParser, type SseEvent } from '../sse.js';
import type { Execution, InstanceDetail } from '@ax/api-types';
import { instancePath } from './instances.js';
import { FINAL_STATES, sleep } from './tail.js';

/** Which bytes: one stream, or both interleaved as they were captured. */
export type LogView = 'all' | 'stdout' | 'stderr';

/** Time between polls of an instance waiting for its next attempt or its final state, ms. */
export const INSTANCE_POLL_MS = 1000;

/** Wait before reconnecting a dropped log stream (or retrying a failed poll), ms. */
const RECONNECT_DELAY_MS = 1000;

/** A stream silent this long (the API pings every 15 s) is taken as dropped, ms. */
const STREAM_IDLE_MS = 45_000;

/** `/api/v1/executions/{id}/log`. */
export const executionLogPath = (executionId: string): string => `/api/v1/executions/${encodeURIComponent(executionId)}/log`;

/** `/api/v1/instances/{id}/log`. */
export const instanceLogPath = (instanceId: string): string => `${instancePath(instanceId)}/log`;

/** Where reading stopped. */
export interface LogPosition {
  /** Offset of the next byte to read (in the view). */
  readonly next: number;
  /** The execution is final and everything was read. */
  readonly complete: boolean;
  readonly truncated: boolean;
  /** The execution read (null: an instance not dispatched yet). */
  readonly executionId: string | null;
}

function headerInt(headers: Headers, name: string): number {
  const value = headers.get(name);
  const n = value === null ? NaN : Number(value);
  if (!Number.isSafeInteger(n) || n < 0) throw new NetworkError(`the answer has no valid ${name} header; is it the ax admin API?`);
  return n;
}

/**
 * Prints `view` of a log from `from` by paging: `path` is an execution's or an instance's log
 * (after the first page, the execution that page named is read on, so a retry starting
 * between two pages cannot mix two attempts).
 */
export async function printPages(ctx: Ctx, path: string, view: LogView, from = 0): Promise<LogPosition> {
  let offset = from;
  let current = path;
  for (;;) {
    const page = await ctx.client.getBytes(current, { stream: view, offset });
    if (page.body.length > 0) await ctx.io.write(page.body);
    const size = headerInt(page.headers, 'x-ax-log-size');
    const next = headerInt(page.headers, 'x-ax-log-next-offset');
    const executionId = page.headers.get('x-ax-execution-id');
    const complete = page.headers.get('x-ax-log-complete') === 'true';
    const truncated = page.headers.get('x-ax-log-truncated') === 'true';
    if (executionId !== null) current = executionLogPath(executionId);
    // the end of what is readable now (a running job's next chunk is not there yet), or no progress
    if (next >= size || next <= offset) return { next: Math.max(next, offset), complete: complete && next >= size, truncated, executionId };
    offset = next;
  }
}

/** The `end` event. */
export interface LogEnd {
  readonly size: number;
  readonly truncated: boolean;
  /** False: the execution ended but its output stayed incomplete (a lost worker). */
  readonly complete: boolean;
}

/** Whether a failed request may succeed when tried again. */
function isTransient(err: unknown): boolean {
  return err instanceof NetworkError || (err instanceof ApiRequestError && err.status >= 500);
}

/** Thrown when Ctrl-C came: `run` answers exit 130. */
function interrupted(ctx: Ctx): CommandFailed {
  return new CommandFailed(`${ctx.command}: interrupted`);
}

/** Runs a request; a transient failure is reported once and tried again until it answers. */
async function retrying<T>(ctx: Ctx, send: () => Promise<T>): Promise<T> {
  let outage = false;
  for (;;) {
    if (ctx.signal.aborted) throw interrupted(ctx);
    try {
      const result = await send();
      if (outage) ctx.io.err(`axctl: ${ctx.command}: ${ctx.client.baseUrl} answers again`);
      return result;
    } catch (err) {
      if (ctx.signal.aborted) throw interrupted(ctx);
      if (!isTransient(err)) throw err;
      if (!outage) ctx.io.err(`axctl: ${ctx.command}: ${(err as Error).message}; retrying`);
      outage = true;
      await sleep(RECONNECT_DELAY_MS, ctx.signal);
    }
  }
}

interface ChunkData {
  stream: string;
  offset: number;
  text: string;
}

/**
 * Reads one SSE connection: writes every chunk, answers the `end` event, or null when the
 * connection ended without one. Advances `state.pos` to the `id` of each chunk.
 */
async function readStream(ctx: Ctx, response: Response, controller: AbortController, state: { pos: number }): Promise<LogEnd | null> {
  if (response.body === null) return null;
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder('utf-8');
  const parser = new SseParser();
  let idle: NodeJS.Timeout | undefined;
  const arm = (): void => {
    if (idle !== undefined) clearTimeout(idle);
    idle = setTimeout(() => controller.abort(new NetworkError(`the log stream was silent for ${STREAM_IDLE_MS / 1000}s`)), STREAM_IDLE_MS);
  };
  const handle = async (e: SseEvent): Promise<LogEnd | null> => {
    if (e.event === 'chunk') {
      const data = JSON.parse(e.data) as ChunkData;
      const bytes = Buffer.from(data.text, 'utf8');
      // the API resumes exactly at the id, so nothing comes twice; the id is the resume position
      if (bytes.length > 0) await ctx.io.write(bytes);
      state.pos = Math.max(state.pos, e.id === undefined ? data.offset + bytes.length : Number(e.id));
      return null;
    }
    if (e.event === 'end') {
      const data = JSON.parse(e.data) as { size?: number; truncated?: boolean; complete?: boolean };
      return { size: data.size ?? state.pos, truncated: data.truncated === true, complete: data.complete !== false };
    }
    return null;
  };
  try {
    arm();
    for (;;) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch (err) {
        const reason: unknown = controller.signal.reason;
        throw reason instanceof NetworkError ? reason : new NetworkError(`the log stream was interrupted: ${(err as Error).message}`);
      }
      if (chunk.done) return null;
      arm();
      for (const e of parser.push(decoder.decode(chunk.value, { stream: true }))) {
        const end = await handle(e);
        if (end !== null) return end;
      }
    }
  } finally {
    if (idle !== undefined) clearTimeout(idle);
    controller.abort();
    reader.releaseLock();
  }
}

/**
 * Follows one execution's output from `from` (the SSE stream) until its `end` event,
 * reconnecting with `Last-Event-ID` when the connection drops.
 */
export async function followExecution(ctx: Ctx, executionId: string, view: LogView, from: number): Promise<LogEnd> {
  const state = { pos: from };
  const path = `${executionLogPath(executionId)}/stream`;
  let outage = false;
  let resumed = false;
  for (;;) {
    if (ctx.signal.aborted) throw interrupted(ctx);
    const controller = new AbortController();
    try {
      const response = await ctx.client.openStream(path, {
        query: { stream: view, offset: state.pos },
        ...(resumed ? { headers: { 'last-event-id': String(state.pos) } } : {}),
        signal: controller.signal,
      });
      if (outage) ctx.io.err(`axctl: ${ctx.command}: the log stream is back; resuming at byte ${state.pos}`);
      outage = false;
      const end = await readStream(ctx, response, controller, state);
      if (end !== null) return end;
      throw new NetworkError('the log stream ended before its end event');
    } catch (err) {
      if (ctx.signal.aborted) throw interrupted(ctx);
      if (!isTransient(err)) throw err;
      if (!outage) ctx.io.err(`axctl: ${ctx.command}: ${(err as Error).message}; reconnecting`);
      outage = true;
      resumed = true;
      await sleep(RECONNECT_DELAY_MS, ctx.signal);
    } finally {
      controller.abort();
    }
  }
}

/** Prints an execution's log: what is stored, then (`follow`) the rest as it comes. */
export async function printExecution(ctx: Ctx, executionId: string, view: LogView, follow: boolean): Promise<{ truncated: boolean; complete: boolean }> {
  const pos = await printPages(ctx, executionLogPath(executionId), view);
  if (!follow || pos.complete) return pos;
  const end = await followExecution(ctx, executionId, view, pos.next);
  return { truncated: end.truncated || pos.truncated, complete: end.complete };
}

/** An instance's executions in the order they ran. */
export function executionsInOrder(d: Pick<InstanceDetail, 'executions'>): Execution[] {
  return [...(d.executions ?? [])].sort((a, b) => a.runNo - b.runNo || a.attempt - b.attempt || a.dispatchedAt.localeCompare(b.dispatchedAt));
}

/** Options of {@link followInstance}. */
export interface FollowInstanceOptions {
  /** Print the output (else only wait for the final state). */
  readonly logs: boolean;
  readonly view: LogView;
  /** Start with the current (latest) attempt (`axctl logs -f`), else with the first (a new trigger). */
  readonly fromCurrent: boolean;
}

/**
 * Waits until the instance is final, printing the output of each attempt as it runs (the next
 * attempt's after a retry, announced on stderr). Answers the final detail.
 */
export async function followInstance(ctx: Ctx, instanceId: string, opts: FollowInstanceOptions): Promise<InstanceDetail> {
  const done = new Set<string>();
  let polled = false;
  let first = true;
  let truncated = false;
  for (;;) {
    const { body: d } = await retrying(ctx, () => ctx.client.get<InstanceDetail>(instancePath(instanceId)));
    const executions = executionsInOrder(d);
    if (!polled && opts.fromCurrent) executions.slice(0, -1).forEach((e) => done.add(e.executionId));
    polled = true;
    const next = opts.logs ? executions.find((e) => !done.has(e.executionId)) : undefined;
    if (next !== undefined) {
      if (!first) ctx.io.err(`--- attempt ${next.attempt}/${d.maxAttempts} (execution ${next.executionId}) ---`);
      first = false;
      const end = await printExecution(ctx, next.executionId, opts.view, true);
      truncated ||= end.truncated;
      if (!end.complete) ctx.io.err(`(the output of attempt ${next.attempt} is incomplete: its worker never sent the rest)`);
      done.add(next.executionId);
      continue;
    }
    if (FINAL_STATES.has(d.state)) {
      if (truncated) ctx.io.err('(output truncated: bytes past AX_LOG_MAX_BYTES were dropped)');
      return d;
    }
    await sleep(INSTANCE_POLL_MS, ctx.signal);
    if (ctx.signal.aborted) throw interrupted(ctx);
  }
}

/**
 * `GET /api/v1/executions/{id}/log/stream` (ADMIN-API.md): Server-Sent Events of an
 * execution's output as it is stored.
 *
 * ```
 * id: <next offset>                 resume position (EventSource sends it back as Last-Event-ID)
 * event: chunk
 * data: {"stream":"stdout","offset":<offset of the first byte>,"text":"…"}
 *
 * event: end
 * data: {"size":<bytes of the view>,"truncated":false}
 *
 * : ping                            every 15 s
 * ```
 * One connection polls the store every `pollMs` (default 400 ms: a stored chunk is on the wire
 * within half a second): a page from its position, then, when nothing came, the end marker (one
 * primary-key lookup); the full layout only once the end marker is there. It ends with `end`
 * once the output is complete; when the execution is final but its output stays incomplete
 * (a lost worker never sent the rest) for `incompleteGraceMs`, with `end` carrying
 * `"complete":false`. A client that goes away stops the loop at once.
 *
 * A stream lives no longer than its token (#45): it is registered under the token
 * (log-stream-registry.ts, at most `AX_LOG_STREAMS_PER_TOKEN` at once, else 429 before any
 * byte is sent), ended at once when the token is revoked through this process, and its token's
 * row is read every `tokenCheckMs` (default 5 s) for a revocation elsewhere. Such an end is
 * `event: closed` with `data: {"reason":"TOKEN_REVOKED","message"}`; an EventSource that
 * reconnects then gets 401 and stops.
 *
 * Text is UTF-8 decoded per stream across events (a character cut between two chunks is sent
 * whole, in the later event); bytes that are not UTF-8 become U+FFFD. The paged GET gives the
 * bytes as they are.
 */
import { StringDecoder } from 'node:string_decoder';
import type { Request, Response } from 'express';
import { toError, type LogStream } from '@ax/core';
import { getApiToken, getExecution, readLogEnd, readLogPage, type ExecutionRecord, type LogView } from '@ax/store';
import type { AppDeps } from './deps.js';
import type { Principal } from './auth.js';
import { sessionStillValid } from './console-sessions.js';
import { isExecutionFinal, readLogStatus, type LogStatus } from './log-view.js';

/** Timings of one stream connection. */
export interface LogStreamTimings {
  /** Store poll while nothing new came, ms. Default 400. */
  readonly pollMs: number;
  /** Heartbeat comment interval, ms. Default 15000. */
  readonly pingMs: number;
  /** How long a final execution's incomplete output is waited for before `end`, ms. Default 60000. */
  readonly incompleteGraceMs: number;
  /** How often an open stream reads its token's row, to end when it was revoked elsewhere, ms. Default 5000. */
  readonly tokenCheckMs?: number;
}

/** Defaults of {@link LogStreamTimings}. */
export const DEFAULT_LOG_STREAM_TIMINGS: LogStreamTimings = { pollMs: 400, pingMs: 15_000, incompleteGraceMs: 60_000, tokenCheckMs: 5_000 };

/** Bytes read per poll at most. */
const READ_BYTES = 1_048_576;

/** One SSE event (pure). Data is one line: JSON never holds a raw newline. */
export function sseEvent(event: string, data: unknown, id?: number): string {
  return `${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** The resume offset: `Last-Event-ID` (a reconnecting EventSource) before `?offset=`. */
export function resumeOffset(req: Request, queryOffset: number): number {
  const last = req.headers['last-event-id'];
  const value = Array.isArray(last) ? last[0] : last;
  if (value !== undefined && /^\d{1,16}$/.test(value.trim())) return Number(value.trim());
  return queryOffset;
}

/**
 * Streams `view` of `execution` from `from` until complete, the client leaves or token `tokenId`
 * is revoked.
 * @throws ApiError 429 when the token holds its most streams already (nothing is sent then).
 */
export function streamLog(deps: AppDeps, req: Request, res: Response, execution: ExecutionRecord, view: LogView, from: number, principal: Principal): void {
  // A console session counts as its token (or, for an OIDC user, as itself).
  const tokenId = principal.tokenId ?? `session:${principal.session?.idHash ?? principal.name}`;
  const session = principal.session;
  const timings = deps.logStream ?? DEFAULT_LOG_STREAM_TIMINGS;
  const logger = deps.logger.child({ component: 'log-stream', executionId: execution.executionId, view });
  const unregister = deps.logStreams.open(tokenId, {
    end: (reason) => {
      if (closed) return;
      res.write(sseEvent('closed', { reason, message: 'the token of this stream was revoked' }));
      close();
      res.end();
    },
  });
  res.status(200);
  res.setHeader('content-type', 'text/event-stream; charset=utf-8');
  res.setHeader('cache-control', 'no-store');
  res.setHeader('x-accel-buffering', 'no'); // nginx: do not buffer the stream
  res.flushHeaders();
  res.write('retry: 2000\n\n');

  const decoders: Record<LogStream, StringDecoder> = { stdout: new StringDecoder('utf8'), stderr: new StringDecoder('utf8') };
  let pos = from;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let finalSinceMs: number | undefined;
  const ping = setInterval(() => {
    if (!closed) res.write(': ping\n\n');
  }, timings.pingMs);
  const tokenCheck = setInterval(() => {
    const stillValid =
      session !== undefined
        ? sessionStillValid(deps, session)
        : getApiToken(deps.pool, tokenId).then((token) => token !== null && token.revokedAt === null);
    stillValid.then(
      (valid) => {
        if (!valid) deps.logStreams.endToken(tokenId, 'TOKEN_REVOKED');
      },
      // a store hiccup: the next check tries again (habit 6)
      (thrown: unknown) => logger.warn({ err: toError(thrown) }, 'log stream token check failed; retrying'),
    );
  }, timings.tokenCheckMs ?? DEFAULT_LOG_STREAM_TIMINGS.tokenCheckMs);
  deps.apiMetrics.logStreams.inc();
  const close = (): void => {
    if (closed) return;
    closed = true;
    unregister();
    deps.apiMetrics.logStreams.dec();
    clearInterval(ping);
    clearInterval(tokenCheck);
    if (timer !== undefined) clearTimeout(timer);
  };
  res.on('close', close);
  req.on('close', close);

  const finish = (data: Record<string, unknown>): void => {
    for (const stream of ['stdout', 'stderr'] as const) {
      const rest = decoders[stream].end();
      if (rest !== '') res.write(sseEvent('chunk', { stream, offset: pos, text: rest }, pos));
    }
    res.write(sseEvent('end', data));
    close();
    res.end();
  };

  /** One poll; returns whether more may be read at once. */
  const poll = async (): Promise<boolean> => {
    let current = execution;
    let status: LogStatus | undefined;
    // the layout (one index scan) only once the end marker is there; before, one key lookup
    if ((await readLogEnd(deps.pool, execution.executionId)) !== null) {
      current = (await getExecution(deps.pool, execution.executionId)) ?? execution;
      status = await readLogStatus(deps.pool, current, view);
    }
    const page = await readLogPage(deps.pool, execution.executionId, view, pos, READ_BYTES, { skipGaps: status?.skipGaps ?? false });
    if (closed) return false;
    // adjacent pieces of one stream go as one event
    const merged: Array<{ stream: LogStream; start: number; parts: Buffer[]; end: number }> = [];
    for (const p of page.pieces) {
      const last = merged.at(-1);
      if (last !== undefined && last.stream === p.stream && last.end === p.start) {
        last.parts.push(p.data);
        last.end += p.data.length;
      } else merged.push({ stream: p.stream, start: p.start, parts: [p.data], end: p.start + p.data.length });
    }
    for (const m of merged) {
      const text = decoders[m.stream].write(Buffer.concat(m.parts));
      if (text !== '') res.write(sseEvent('chunk', { stream: m.stream, offset: m.start, text }, m.end));
    }
    pos = page.next;
    if (status?.complete === true && pos >= status.size) {
      finish({ size: status.size, truncated: status.truncated });
      return false;
    }
    if (page.data.length > 0) return page.data.length >= READ_BYTES;
    if (status === undefined) current = (await getExecution(deps.pool, execution.executionId)) ?? current;
    if (isExecutionFinal(current)) {
      // final, yet its output stays incomplete (a lost worker never sent the rest): give up after a grace
      finalSinceMs ??= deps.now();
      if (deps.now() - finalSinceMs >= timings.incompleteGraceMs) {
        finish({ size: pos, truncated: status?.truncated ?? false, complete: false });
        return false;
      }
    }
    return false;
  };

  const loop = (): void => {
    if (closed) return;
    poll().then(
      (again) => {
        if (!closed) timer = setTimeout(loop, again ? 0 : timings.pollMs);
      },
      (thrown: unknown) => {
        // a store hiccup: the stream stays open and tries again (habit 6)
        logger.warn({ err: toError(thrown) }, 'log stream poll failed; retrying');
        if (!closed) timer = setTimeout(loop, Math.max(timings.pollMs, 1_000));
      },
    );
  };
  loop();
}

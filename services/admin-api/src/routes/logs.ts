/**
 * Job output endpoints (ADMIN-API.md "Job output (logs)", issue #19): an execution's log by
 * offset, the current execution's log of an instance, and a live SSE stream (log-stream.ts).
 * Scoped like every execution and instance route: outside the token's teams the answer is 404.
 *
 * The paged GET answers the bytes `[offset, offset+limit)` of the view as `text/plain` (the
 * bytes as the job wrote them; not necessarily UTF-8), contiguous from `offset`: it stops before
 * a chunk still on its way, and skips only the bytes a truncated output dropped. Headers:
 * `X-Ax-Log-Size` (bytes of the view readable so far: a client pages until `offset` reaches it),
 * `X-Ax-Log-Complete`, `X-Ax-Log-Truncated`, and the extensions `X-Ax-Log-Offset` (position of
 * the first byte of the body) and `X-Ax-Log-Next-Offset` (where the next page starts: the
 * body's end, or past dropped bytes), `X-Ax-Execution-Id`.
 */
import { z } from 'zod';
import { FINAL_STATES } from '@ax/core';
import { LOG_PAGE_MAX_BYTES, readLogPage, type ExecutionRecord, type LogView } from '@ax/store';
import type { Response } from 'express';
import type { AppDeps } from '../deps.js';
import { ApiError } from '../errors.js';
import { resumeOffset, streamLog } from '../log-stream.js';
import { DEFAULT_LOG_STREAMS_PER_TOKEN } from '../log-stream-registry.js';
import { LOG_HEADERS, readLogStatus } from '../log-view.js';
import { defineRoute, type RouteSpec } from '../route.js';
import { idParams } from '../schemas.js';
import { mustSeeExecution, mustSeeInstance } from '../team-scope.js';

const executionParams = z.object({ executionId: z.string().max(64) });

const streamSchema = z.enum(['all', 'stdout', 'stderr']).default('all').describe('`all` (both, interleaved in capture order; default), `stdout` or `stderr`');
const offsetSchema = z.coerce
  .number({ error: 'offset must be a byte offset (an integer ≥ 0)' })
  .int('offset must be a byte offset (an integer ≥ 0)')
  .min(0, 'offset must be a byte offset (an integer ≥ 0)')
  .max(Number.MAX_SAFE_INTEGER)
  .default(0)
  .describe('first byte, counted in the chosen stream (default 0)');
const LIMIT_MESSAGE = `limit must be an integer from 1 to ${LOG_PAGE_MAX_BYTES}`;
const limitSchema = z.coerce
  .number({ error: LIMIT_MESSAGE })
  .int(LIMIT_MESSAGE)
  .min(1, LIMIT_MESSAGE)
  .max(LOG_PAGE_MAX_BYTES, LIMIT_MESSAGE)
  .default(LOG_PAGE_MAX_BYTES)
  .describe('bytes at most (default and max 4 MiB)');

const pageQuery = z.object({ stream: streamSchema, offset: offsetSchema, limit: limitSchema });
type PageQuery = z.output<typeof pageQuery>;

const PAGE_HEADERS = {
  [LOG_HEADERS.size]: 'bytes of the requested stream stored so far and readable from 0 (for `all` both streams, interleaved in arrival order); once complete, the stream\'s full size (bytes dropped by truncation included: offsets are true positions)',
  [LOG_HEADERS.complete]: '`true` once the execution is final and all its output is stored',
  [LOG_HEADERS.truncated]: '`true` when output past AX_LOG_MAX_BYTES was dropped (the head and each stream\'s last 64 KiB are kept)',
  [LOG_HEADERS.offset]: 'extension: position of the first byte of the body (past dropped bytes when `offset` lay in them)',
  [LOG_HEADERS.nextOffset]: 'extension: the `offset` of the next page',
  [LOG_HEADERS.executionId]: 'extension: the execution whose output this is',
};

const textBody = { schema: z.string().describe('the bytes of the stream, as the job wrote them'), contentType: 'text/plain; charset=utf-8' };

function sendPage(res: Response, executionId: string | null, headers: { size: number; complete: boolean; truncated: boolean; offset: number; next: number }, body: Buffer): void {
  res.status(200);
  res.setHeader('content-type', 'text/plain; charset=utf-8');
  res.setHeader(LOG_HEADERS.size, String(headers.size));
  res.setHeader(LOG_HEADERS.complete, String(headers.complete));
  res.setHeader(LOG_HEADERS.truncated, String(headers.truncated));
  res.setHeader(LOG_HEADERS.offset, String(headers.offset));
  res.setHeader(LOG_HEADERS.nextOffset, String(headers.next));
  if (executionId !== null) res.setHeader(LOG_HEADERS.executionId, executionId);
  res.setHeader('content-length', String(body.length));
  res.end(body);
}

async function answerPage(deps: AppDeps, res: Response, execution: ExecutionRecord, query: PageQuery): Promise<void> {
  const view: LogView = query.stream;
  const status = await readLogStatus(deps.pool, execution, view);
  const page = await readLogPage(deps.pool, execution.executionId, view, query.offset, query.limit, { skipGaps: status.skipGaps });
  sendPage(res, execution.executionId, { size: status.size, complete: status.complete, truncated: status.truncated, offset: page.start, next: page.next }, page.data);
}

export const logRoutes: RouteSpec[] = [
  defineRoute<{ executionId: string }, PageQuery>({
    method: 'get',
    path: '/api/v1/executions/{executionId}/log',
    access: 'viewer',
    tag: 'logs',
    summary: "An execution's output, bytes [offset, offset+limit) of one stream or both",
    params: executionParams,
    query: pageQuery,
    responses: {
      200: { description: 'the bytes (empty past the end); stops before output not stored yet', ...textBody, headers: PAGE_HEADERS },
      404: { description: 'no such execution (or not of a team of the token)' },
    },
    handler: async ({ params, query, deps, principal, res }) => {
      const { execution } = await mustSeeExecution(deps.pool, principal, params.executionId);
      await answerPage(deps, res, execution, query);
      return { status: 200, sent: true };
    },
  }),
  defineRoute<{ id: string }, PageQuery>({
    method: 'get',
    path: '/api/v1/instances/{id}/log',
    access: 'viewer',
    tag: 'logs',
    summary: "The output of the instance's current (latest) execution, as GET …/executions/{executionId}/log",
    params: idParams,
    query: pageQuery,
    responses: {
      200: {
        description: 'as for an execution; an instance not dispatched yet has an empty log (complete once the instance is final)',
        ...textBody,
        headers: PAGE_HEADERS,
      },
      404: { description: 'no such instance (or not of a team of the token)' },
    },
    handler: async ({ params, query, deps, principal, res }) => {
      const instance = await mustSeeInstance(deps.pool, principal, params.id);
      const { currentExecutionId } = instance;
      if (currentExecutionId === null) {
        const final = FINAL_STATES.includes(instance.state);
        sendPage(res, null, { size: 0, complete: final, truncated: false, offset: query.offset, next: query.offset }, Buffer.alloc(0));
        return { status: 200, sent: true };
      }
      // through the execution route's check, so an execution of another team is never reached
      const { execution } = await mustSeeExecution(deps.pool, principal, currentExecutionId);
      await answerPage(deps, res, execution, query);
      return { status: 200, sent: true };
    },
  }),
  defineRoute<{ executionId: string }, { stream: LogView; offset: number }>({
    method: 'get',
    path: '/api/v1/executions/{executionId}/log/stream',
    access: 'viewer',
    tag: 'logs',
    summary: "An execution's output as Server-Sent Events, from `offset` (or `Last-Event-ID`) on, until it is complete",
    description:
      '`event: chunk` with `id: <offset after the chunk>` and `data: {"stream","offset","text"}` (offset of the first byte, counted in the requested stream; `stream` is the source stream, also for `all`) as output is stored; ' +
      '`event: end` with `data: {"size","truncated"}` once complete (extension: `"complete":false` when the execution ended but its output stayed incomplete for 60 s); a `: ping` comment every 15 s. ' +
      'A reconnecting EventSource resumes after the last event it received (`Last-Event-ID` wins over `offset`). ' +
      'Extension: the stream ends with `event: closed` and `data: {"reason":"TOKEN_REVOKED","message"}` when its token is revoked (at once through this process, within 5 s otherwise); a token holds at most AX_LOG_STREAMS_PER_TOKEN streams at once.',
    params: executionParams,
    query: z.object({ stream: streamSchema, offset: offsetSchema }),
    headers: { 'Last-Event-ID': 'resume offset (the `id` of the last event received); wins over `offset`' },
    responses: {
      200: { description: 'the event stream', schema: z.string().describe('text/event-stream'), contentType: 'text/event-stream' },
      404: { description: 'no such execution (or not of a team of the token)' },
      429: {
        description: `extension: \`RATE_LIMITED\`: the token already holds AX_LOG_STREAMS_PER_TOKEN streams open in this process (default ${DEFAULT_LOG_STREAMS_PER_TOKEN}); \`details.max\`, \`details.open\`, \`Retry-After\``,
        headers: { 'Retry-After': 'seconds to wait before opening another' },
      },
    },
    handler: async ({ params, query, deps, principal, req, res }) => {
      const { execution } = await mustSeeExecution(deps.pool, principal, params.executionId);
      // viewer access: the caller is always a token or a session
      if (principal === null) throw new ApiError(401, 'UNAUTHENTICATED', 'a bearer token or a session is required');
      streamLog(deps, req, res, execution, query.stream, resumeOffset(req, query.offset), principal);
      return { status: 200, sent: true };
    },
  }),
];

/**
 * Plain `node:http` support, no framework: `writeAnswer` (used by the express, koa and nest
 * adapters) and `axExecutorApp`, a request listener serving several executors by path, for a
 * service that does nothing else:
 *
 * ```ts
 * http.createServer(axExecutorApp({ '/ax/order-stat': { keys, handler } })).listen(8090);
 * ```
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorAnswer, type ExecutorAnswer } from './answer.js';
import { createExecutorHandler, type AxExecutorOptions, type ExecutorHandler } from './handler.js';
import { rawBodyOf, warnOnce } from './raw-body.js';

/** Writes `answer` as JSON (nothing when the response is already sent or the socket is gone). */
export function writeAnswer(res: ServerResponse, answer: ExecutorAnswer): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(answer.body);
  res.statusCode = answer.status;
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.setHeader('content-length', Buffer.byteLength(text));
  res.end(text);
}

/** An AbortSignal aborted when `res` closes before its answer was written. */
export function hangUpSignal(res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort(new Error('the worker hung up'));
  });
  return controller.signal;
}

/** Runs one call of a node request: raw body (kept or read), verify, handler, answer. */
export async function serveNodeRequest(
  executor: ExecutorHandler,
  req: IncomingMessage & { readonly rawBody?: unknown; readonly body?: unknown; readonly originalUrl?: string },
  res: ServerResponse,
  fix: string,
  warned: { warned: boolean },
): Promise<void> {
  const hangUp = hangUpSignal(res);
  const raw = await rawBodyOf(req, { rawBody: req.rawBody, body: req.body }, executor.options.bodyLimitBytes, fix);
  if (!raw.ok) {
    if (raw.error.code === 'RAW_BODY_UNAVAILABLE') warnOnce(warned, raw.error.message);
    writeAnswer(res, errorAnswer(raw.error));
    return;
  }
  const answer = await executor.handle({ rawBody: raw.rawBody, headers: req.headers, method: req.method ?? 'POST', path: req.originalUrl ?? req.url ?? '/', hangUp, reparsed: raw.reparsed });
  writeAnswer(res, answer);
}

function pathOf(url: string | undefined): string {
  const path = (url ?? '/').split('?')[0] ?? '/';
  return path.length > 1 ? path.replace(/\/+$/, '') : path;
}

/**
 * A `node:http` request listener serving executors by exact path (a trailing `/` and a query
 * are ignored for the match, not for the signature). Another path is 404, another method 405.
 */
export function axExecutorApp(routes: Readonly<Record<string, AxExecutorOptions>>): (req: IncomingMessage, res: ServerResponse) => void {
  const executors = new Map<string, ExecutorHandler>();
  for (const [path, options] of Object.entries(routes)) executors.set(pathOf(path), createExecutorHandler(options, `axExecutorApp('${path}')`));
  const warned = { warned: false };
  const fix = 'Read the body in no middleware before axExecutorApp.';
  return (req, res) => {
    const executor = executors.get(pathOf(req.url));
    if (executor === undefined) {
      writeAnswer(res, { status: 404, body: { error: { code: 'NOT_FOUND', message: `no ax executor at ${pathOf(req.url)}` } } });
      return;
    }
    if (req.method !== 'POST') {
      res.setHeader('allow', 'POST');
      writeAnswer(res, { status: 405, body: { error: { code: 'METHOD_NOT_ALLOWED', message: 'ax executors answer POST' } } });
      return;
    }
    serveNodeRequest(executor, req, res, fix, warned).catch((error: unknown) => {
      writeAnswer(res, { status: 500, body: { error: { code: 'INTERNAL', message: error instanceof Error ? error.message : String(error) } } });
    });
  };
}

/**
 * `ax-scheduler-sdk/express`: the executor as express middleware (express 4 and 5; express itself is
 * not imported). Mount it at the path the task's `exec.url` names:
 *
 * ```ts
 * import { axExecutor, captureRawBody } from 'ax-scheduler-sdk/express';
 * app.use(express.json({ verify: captureRawBody })); // if the app parses JSON: keep the raw bytes
 * app.post('/ax/order-stat', axExecutor({ keys, handler: async (ctx) => ({ success: true }) }));
 * ```
 *
 * The signature covers the body's exact bytes. The middleware uses, in order: `req.rawBody`
 * (kept by `express.json({ verify: captureRawBody })`), a Buffer `req.body` (`express.raw()`),
 * the request stream when no body parser read it, or the JSON a plain `express.json()` parsed,
 * re-serialized (raw-body.ts: the worker's bytes come back exactly). A body kept as something
 * else answers 500 `RAW_BODY_UNAVAILABLE` naming the fix (and warns once in the log).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createExecutorHandler, type AxExecutorOptions } from './handler.js';
import { serveNodeRequest } from './node.js';

// The core's types, so one import serves an app using this adapter.
export type { Accepted, AxExecutorOptions, ExecutionContext, HandlerResult } from './handler.js';
export type { AxClient, AxResult } from './client.js';
export type { ExecutionCall } from './execution.js';
export type { ExecutorKey, ExecutorKeys } from './keys.js';

/** The parts of an express request the middleware reads. */
export type ExpressLikeRequest = IncomingMessage & { rawBody?: unknown; body?: unknown; originalUrl?: string };

/** An express middleware (`(req, res, next)`), for `app.post(path, …)` or `app.use(path, …)`. */
export type AxExpressMiddleware = (req: ExpressLikeRequest, res: ServerResponse, next: (error?: unknown) => void) => void;

const FIX =
  "Fix: keep the raw bytes with `app.use(express.json({ verify: captureRawBody }))` (import { captureRawBody } from 'ax-scheduler-sdk/express'), or mount the ax route before express.json().";

/**
 * `verify` for `express.json()` / `express.raw()` / `express.text()` (body-parser): keeps the
 * bytes as `req.rawBody`, which `axExecutor` (and Nest) verify.
 */
export function captureRawBody(req: IncomingMessage, _res: ServerResponse, buffer: Buffer): void {
  (req as { rawBody?: Buffer }).rawBody = buffer;
}

/** The executor as express middleware; a request of another method than POST goes to `next()`. */
export function axExecutor(options: AxExecutorOptions): AxExpressMiddleware {
  const executor = createExecutorHandler(options, 'axExecutor (ax-scheduler-sdk/express)');
  const warned = { warned: false };
  return (req, res, next) => {
    if (req.method !== 'POST') {
      next();
      return;
    }
    // an unexpected failure (the handler's own errors are answered) goes to express's error handling
    serveNodeRequest(executor, req, res, FIX, warned).catch(next);
  };
}

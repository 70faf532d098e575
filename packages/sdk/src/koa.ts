/**
 * `ax-scheduler-sdk/koa`: the executor as koa middleware (koa 2 and 3; koa itself is not imported).
 *
 * ```ts
 * import { axKoa } from 'ax-scheduler-sdk/koa';
 * app.use(bodyParser());                                   // optional: koa-bodyparser keeps ctx.request.rawBody
 * app.use(axKoa({ path: '/ax/order-stat', keys, handler })); // or router.post('/ax/order-stat', axKoa({ keys, handler }))
 * ```
 *
 * The raw body is `ctx.request.rawBody` when a body parser kept it (koa-bodyparser,
 * @koa/bodyparser), else the request stream when nothing read it, else a parsed JSON
 * `ctx.request.body` re-serialized (raw-body.ts); a parser that kept something else is answered
 * 500 `RAW_BODY_UNAVAILABLE` naming the fix.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorAnswer } from './answer.js';
import { createExecutorHandler, type AxExecutorOptions } from './handler.js';
import { hangUpSignal } from './node.js';
import { rawBodyOf, warnOnce } from './raw-body.js';

// The core's types, so one import serves an app using this adapter.
export type { Accepted, AxExecutorOptions, ExecutionContext, HandlerResult } from './handler.js';
export type { AxClient, AxResult } from './client.js';
export type { ExecutionCall } from './execution.js';
export type { ExecutorKey, ExecutorKeys } from './keys.js';

/** The parts of a koa context the middleware uses. */
export interface KoaLikeContext {
  readonly method: string;
  /** The path without the query, for the `path` match. */
  readonly path: string;
  /** The URL as received, with its query (the signature covers it). */
  readonly originalUrl: string;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly request: { readonly rawBody?: unknown; readonly body?: unknown };
  status: number;
  body: unknown;
  set(field: string, value: string): void;
}

/** Options of `axKoa`. */
export interface AxKoaOptions extends AxExecutorOptions {
  /**
   * Serve only `POST <path>` and pass anything else to `next()`; default none: every request
   * reaching the middleware is a call (mount it on a router route).
   */
  readonly path?: string;
}

const FIX = 'Fix: mount axKoa before the body parser, or use one that keeps the raw body as ctx.request.rawBody (koa-bodyparser, @koa/bodyparser).';

/** Koa middleware serving one executor. */
export function axKoa(options: AxKoaOptions): (ctx: KoaLikeContext, next: () => Promise<unknown>) => Promise<void> {
  const executor = createExecutorHandler(options, 'axKoa (ax-scheduler-sdk/koa)');
  const warned = { warned: false };
  const only = options.path === undefined ? undefined : options.path.replace(/(.)\/+$/, '$1');
  return async (ctx, next) => {
    if (only !== undefined && (ctx.method !== 'POST' || ctx.path.replace(/(.)\/+$/, '$1') !== only)) {
      await next();
      return;
    }
    const hangUp = hangUpSignal(ctx.res);
    const raw = await rawBodyOf(ctx.req, ctx.request, executor.options.bodyLimitBytes, FIX);
    let answer;
    if (raw.ok) {
      answer = await executor.handle({ rawBody: raw.rawBody, headers: ctx.req.headers, method: ctx.method, path: ctx.originalUrl, hangUp, reparsed: raw.reparsed });
    } else {
      if (raw.error.code === 'RAW_BODY_UNAVAILABLE') warnOnce(warned, raw.error.message);
      answer = errorAnswer(raw.error);
    }
    ctx.status = answer.status;
    ctx.set('content-type', 'application/json; charset=utf-8');
    ctx.body = answer.body;
  };
}

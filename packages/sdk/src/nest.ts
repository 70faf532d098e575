/**
 * `ax-scheduler-sdk/nest`: executors in a NestJS controller (Nest 9–11, express or fastify platform).
 * Nest parses JSON bodies before a controller runs; create the app with `rawBody: true` so the
 * exact bytes the signature covers stay on `req.rawBody`:
 *
 * ```ts
 * const app = await NestFactory.create(AppModule, { rawBody: true });
 *
 * const orderStat = axNest({ keys, client, handler: async (ctx) => ({ success: true }) });
 * @Controller('ax')
 * export class AxController {
 *   @Post('order-stat')
 *   orderStat(@Req() req: RawBodyRequest<Request>, @Res() res: Response) {
 *     return orderStat.handle(req, res); // answers 200 / 202 / 401 itself
 *   }
 * }
 * ```
 *
 * Or only the check: `@UseGuards(new AxExecutorGuard({ keys }))` refuses a bad call (401; without
 * `rawBody: true` the JSON Nest parsed is checked re-serialized) and `axCallOf(req)` gives the verified
 * call to a handler that answers `{success, …}` itself.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpException, type CanActivate, type ExecutionContext as NestExecutionContext } from '@nestjs/common';
import { errorAnswer, type ExecutorAnswer } from './answer.js';
import { verifyResolvedCall, type ExecutionCall, type HeaderSource } from './execution.js';
import { createExecutorHandler, DEFAULT_BODY_LIMIT_BYTES, withReparsedHint, type AxExecutorOptions } from './handler.js';
import { resolveKeys, type ExecutorKeys } from './keys.js';
import { hangUpSignal, writeAnswer } from './node.js';
import { rawBodyOf, warnOnce, type RawBodyResult } from './raw-body.js';
import { DEFAULT_MAX_SKEW_MS, type TeamKeys } from './signature.js';

// The core's types, so one import serves an app using this adapter.
export type { Accepted, AxExecutorOptions, ExecutionContext, HandlerResult } from './handler.js';
export type { AxClient, AxResult } from './client.js';
export type { ExecutionCall } from './execution.js';
export type { ExecutorKey, ExecutorKeys } from './keys.js';

/** The parts of a Nest request (express's or fastify's) used here. */
export interface NestLikeRequest {
  readonly headers: HeaderSource;
  readonly method: string;
  readonly url: string;
  readonly originalUrl?: string;
  /** Set by Nest with `NestFactory.create(AppModule, { rawBody: true })`. */
  readonly rawBody?: Buffer | string | undefined;
  readonly body?: unknown;
  /** The node request under a fastify request. */
  readonly raw?: IncomingMessage;
}

/** A fastify reply (Nest's fastify platform). */
interface ReplyLike {
  code(status: number): ReplyLike;
  header(name: string, value: string): ReplyLike;
  send(body: unknown): unknown;
  readonly raw: ServerResponse;
}

/** Nest's response: express's (a node `ServerResponse`) or fastify's reply. */
export type NestLikeResponse = ServerResponse | ReplyLike;

const FIX = 'Fix: create the app with `NestFactory.create(AppModule, { rawBody: true })` (Nest keeps the bytes as req.rawBody).';

function nodeRequest(req: NestLikeRequest): IncomingMessage | undefined {
  if (req.raw !== undefined) return req.raw;
  const candidate = req as unknown as IncomingMessage;
  return typeof candidate.on === 'function' && 'readableEnded' in candidate ? candidate : undefined;
}

function rawBodyOfNest(req: NestLikeRequest, limitBytes: number): Promise<RawBodyResult> {
  const node = nodeRequest(req);
  // fastify's request: its stream is always consumed by fastify; only rawBody can hold the bytes
  const stream = node !== undefined && req.raw === undefined ? node : ({ readableEnded: true } as IncomingMessage);
  return rawBodyOf(stream, { rawBody: req.rawBody, body: req.body }, limitBytes, FIX);
}

function isReply(res: NestLikeResponse): res is ReplyLike {
  return typeof (res as ReplyLike).code === 'function' && typeof (res as ReplyLike).send === 'function';
}

function send(res: NestLikeResponse, answer: ExecutorAnswer): void {
  if (isReply(res)) void res.code(answer.status).header('content-type', 'application/json; charset=utf-8').send(answer.body);
  else writeAnswer(res, answer);
}

/** An executor for a Nest controller method taking `@Req()` and `@Res()`. */
export interface AxNestExecutor {
  /** Verifies and runs the call, and answers it on `res` (200 / 202 / 4xx / 500). */
  handle(req: NestLikeRequest, res: NestLikeResponse): Promise<void>;
}

/** Creates an executor to call from a controller method (see the module comment). */
export function axNest(options: AxExecutorOptions): AxNestExecutor {
  const executor = createExecutorHandler(options, 'axNest (ax-scheduler-sdk/nest)');
  const warned = { warned: false };
  return {
    async handle(req, res) {
      const hangUp = hangUpSignal(isReply(res) ? res.raw : res);
      const raw = await rawBodyOfNest(req, executor.options.bodyLimitBytes);
      if (!raw.ok) {
        if (raw.error.code === 'RAW_BODY_UNAVAILABLE') warnOnce(warned, raw.error.message);
        send(res, errorAnswer(raw.error));
        return;
      }
      send(res, await executor.handle({ rawBody: raw.rawBody, headers: req.headers, method: req.method, path: req.originalUrl ?? req.url, hangUp, reparsed: raw.reparsed }));
    },
  };
}

/** Options of `AxExecutorGuard`. */
export interface AxExecutorGuardOptions {
  /** As `AxExecutorOptions.keys`. */
  readonly keys: ExecutorKeys;
  /** Default 300000 ms (5 min). */
  readonly maxSkewMs?: number;
  /** Default 1048576 bytes. */
  readonly bodyLimitBytes?: number;
}

const CALL = Symbol.for('ax-scheduler-sdk.nest.call');

/**
 * A Nest guard that lets through only a verified ax call (else throws an `HttpException`
 * answered 401 / 400 / 500 with `{error: {code, message}}`); `axCallOf(req)` then gives the call.
 */
export class AxExecutorGuard implements CanActivate {
  private readonly keys: TeamKeys;
  private readonly maxSkewMs: number;
  private readonly bodyLimitBytes: number;

  constructor(options: AxExecutorGuardOptions) {
    this.keys = resolveKeys(options.keys, 'AxExecutorGuard (ax-scheduler-sdk/nest)');
    this.maxSkewMs = options.maxSkewMs ?? DEFAULT_MAX_SKEW_MS;
    this.bodyLimitBytes = options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
  }

  async canActivate(context: NestExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<NestLikeRequest>();
    const raw = await rawBodyOfNest(req, this.bodyLimitBytes);
    const checked = raw.ok ? verifyResolvedCall({ rawBody: raw.rawBody, headers: req.headers, method: req.method, path: req.originalUrl ?? req.url, keys: this.keys, maxSkewMs: this.maxSkewMs }) : raw;
    if (!checked.ok) {
      const answer = errorAnswer(raw.ok ? withReparsedHint(checked.error, raw.reparsed) : checked.error);
      throw new HttpException(answer.body, answer.status);
    }
    (req as { [CALL]?: ExecutionCall })[CALL] = checked.call;
    return true;
  }
}

/** The call `AxExecutorGuard` verified for `req`; throws when the guard did not run. */
export function axCallOf(req: NestLikeRequest): ExecutionCall {
  const call = (req as { [CALL]?: ExecutionCall })[CALL];
  if (call === undefined) throw new Error('axCallOf: no verified ax call on this request; add @UseGuards(new AxExecutorGuard({ keys })) to the route');
  return call;
}

/**
 * `createExecutorHandler`: the whole life of one execution call, framework-neutral. An adapter
 * gives it the raw body, headers, method and path, and writes the `ExecutorAnswer` it returns:
 * verify (`verifyExecutorCall`), build the handler's context (deadline signal, `accepted()`,
 * `report`, `claim`), run the business handler and turn its outcome into the answer.
 */
import type { AxClient, AxResult } from './client.js';
import { acceptedAnswer, errorAnswer, syncAnswer, type ExecutorAnswer } from './answer.js';
import { ExecutorCallError, headerValue, verifyResolvedCall, type ExecutionCall, type HeaderSource } from './execution.js';
import { AxConfigError, resolveKeys, type ExecutorKeys } from './keys.js';
import { DEFAULT_MAX_SKEW_MS, type TeamKeys } from './signature.js';
import { parseTraceparent, traceScope, type AxTraceContext } from './trace.js';

const ACCEPTED = Symbol.for('ax-scheduler-sdk.accepted');
/** Returned by a handler (through `ctx.accepted()`) to answer 202. */
export interface Accepted {
  readonly [ACCEPTED]: true;
}

/** What a handler gets. */
export interface ExecutionContext extends ExecutionCall {
  /** Aborted at the deadline (or when the worker hangs up): stop synchronous work then. */
  readonly signal: AbortSignal;
  /** Answer 202 now and report later (`return ctx.accepted()`). */
  accepted(): Accepted;
  /** Reports the final result of this execution (after `accepted()`); needs `client`. */
  report(result: AxResult): Promise<{ duplicate: boolean }>;
  /** Claims this run for this execution; false = another execution holds it, do not do the work. */
  claim(): Promise<boolean>;
  /**
   * ax's trace context from the `traceparent` header (sent when ax's tracing is on), or null.
   * With `@opentelemetry/api` installed the handler already runs in a span continuing it.
   */
  readonly trace: AxTraceContext | null;
}

/** What a handler returns. */
export type HandlerResult = AxResult | Accepted | void;

/** Options of every executor adapter (`axExecutor`, `axFastify`, `axKoa`, `axNest`, `axExecutorApp`). */
export interface AxExecutorOptions {
  /**
   * The team's executor keys: a list of what `GET /api/v1/teams/{team}/executor-key` answers
   * (`[{ team, keyVersion, key }]`), or `{ team, keys: { <version>: <key> } }`. During a
   * rotation's grace hold the new and the previous version. Never the master AX_EXECUTOR_SECRET.
   */
  readonly keys: ExecutorKeys;
  readonly handler: (ctx: ExecutionContext) => Promise<HandlerResult> | HandlerResult;
  /** Largest accepted distance of `X-Ax-Timestamp` from this clock; default 300000 ms (5 min). */
  readonly maxSkewMs?: number;
  /** Client used by `ctx.report` / `ctx.claim` (see `createAxClient`); default none (they throw). */
  readonly client?: AxClient;
  /** Largest accepted body; default 1048576 bytes (1 MiB). A larger one is answered 413. */
  readonly bodyLimitBytes?: number;
  /** Called with errors thrown by the handler (they are answered `{success: false}`); default none. */
  readonly onError?: (error: unknown, ctx: ExecutionContext) => void;
  /**
   * Run the handler in an OpenTelemetry span continuing ax's trace when `@opentelemetry/api` is
   * installed and the call carries a `traceparent`; default true. `ctx.trace` is set either way.
   */
  readonly tracing?: boolean;
}

/** One call as an adapter hands it over. */
export interface IncomingExecutorCall {
  readonly rawBody: Buffer | string;
  readonly headers: HeaderSource;
  readonly method: string;
  /** The path with its query string as received (the signature covers it). */
  readonly path: string;
  /** Aborted when the caller hung up before the answer was written; default never. */
  readonly hangUp?: AbortSignal;
  /** Set when `rawBody` was re-serialized from a parsed body (raw-body.ts): added to a BAD_SIGNATURE. */
  readonly reparsed?: string | undefined;
}

/** The options, checked once. */
export interface ResolvedExecutorOptions {
  readonly keys: TeamKeys;
  readonly maxSkewMs: number;
  readonly bodyLimitBytes: number;
}

/** A created executor: adapters call `handle` for each request. */
export interface ExecutorHandler {
  readonly options: ResolvedExecutorOptions;
  /** Verifies and runs one call; resolves with the answer to send, never rejects. */
  handle(call: IncomingExecutorCall): Promise<ExecutorAnswer>;
}

function isAccepted(value: unknown): value is Accepted {
  return typeof value === 'object' && value !== null && (value as Partial<Accepted>)[ACCEPTED] === true;
}

/** A BAD_SIGNATURE over a re-serialized body says so, with the way to keep the raw bytes. */
export function withReparsedHint(error: ExecutorCallError, reparsed: string | undefined): ExecutorCallError {
  return reparsed === undefined || error.code !== 'BAD_SIGNATURE' ? error : new ExecutorCallError('BAD_SIGNATURE', `${error.message}. ${reparsed}`);
}

/** Default `bodyLimitBytes`. */
export const DEFAULT_BODY_LIMIT_BYTES = 1_048_576;

/** Checks the options (one clear `AxConfigError` line for a mistake) and returns the handler. */
export function createExecutorHandler(options: AxExecutorOptions, where = 'axExecutor'): ExecutorHandler {
  if ((options as { secret?: unknown }).secret !== undefined) {
    throw new AxConfigError(`${where}: signature v1 (\`secret\`) is gone; pass \`keys\` from GET /api/v1/teams/{team}/executor-key, e.g. keys: [{ team, keyVersion, key }]`);
  }
  if (typeof options.handler !== 'function') throw new AxConfigError(`${where}: \`handler\` must be a function (ctx) => result`);
  const resolved: ResolvedExecutorOptions = {
    keys: resolveKeys(options.keys, where),
    maxSkewMs: options.maxSkewMs ?? DEFAULT_MAX_SKEW_MS,
    bodyLimitBytes: options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES,
  };
  if (!(resolved.maxSkewMs > 0)) throw new AxConfigError(`${where}: maxSkewMs must be positive, got ${String(options.maxSkewMs)}`);
  if (!(resolved.bodyLimitBytes > 0)) throw new AxConfigError(`${where}: bodyLimitBytes must be positive, got ${String(options.bodyLimitBytes)}`);
  const noClient = (): never => {
    throw new AxConfigError(`${where}: ctx.report/ctx.claim need the \`client\` option (createAxClient)`);
  };

  async function handle(incoming: IncomingExecutorCall): Promise<ExecutorAnswer> {
    const size = typeof incoming.rawBody === 'string' ? Buffer.byteLength(incoming.rawBody) : incoming.rawBody.length;
    if (size > resolved.bodyLimitBytes) return errorAnswer(new ExecutorCallError('BODY_TOO_LARGE', `the body is larger than ${resolved.bodyLimitBytes} bytes`));
    const checked = verifyResolvedCall({ ...incoming, keys: resolved.keys, maxSkewMs: resolved.maxSkewMs });
    if (!checked.ok) return errorAnswer(withReparsedHint(checked.error, incoming.reparsed));
    const { call } = checked;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new Error('deadline reached')), Math.max(0, Date.parse(call.deadline) - Date.now()));
    timer.unref();
    const onHangUp = (): void => controller.abort(new Error('the worker hung up'));
    incoming.hangUp?.addEventListener('abort', onHangUp, { once: true });
    const client = options.client;
    const trace = parseTraceparent(headerValue(incoming.headers, 'traceparent'));
    const ctx: ExecutionContext = {
      ...call,
      signal: controller.signal,
      accepted: () => ({ [ACCEPTED]: true }),
      report: (result) => (client ? client.report(call.executionId, result) : noClient()),
      claim: () => (client ? client.claim(call.executionId) : noClient()),
      trace,
    };
    const scope = await traceScope(options.tracing === false ? null : trace, call);
    try {
      const result = await scope.run(() => options.handler(ctx));
      scope.end({ success: isAccepted(result) || result == null || result.success !== false });
      return isAccepted(result) ? acceptedAnswer() : syncAnswer(result ?? undefined);
    } catch (error) {
      scope.end({ error });
      try {
        options.onError?.(error, ctx);
      } catch {
        // a throwing onError must not turn the answer into a dropped connection
      }
      return syncAnswer({ success: false, message: error instanceof Error ? error.message : String(error) });
    } finally {
      clearTimeout(timer);
      incoming.hangUp?.removeEventListener('abort', onHangUp);
    }
  }

  return { options: resolved, handle };
}

/**
 * `axExecutor`: an express router that receives ax HTTP executions (ADMIN-API.md "HTTP
 * executors"), verifies the signature (v2, with the team's executor key) and timestamp,
 * validates the body and calls the business handler.
 *
 * ```ts
 * const keys = { team: 'orders', keys: { 1: process.env.AX_EXECUTOR_KEY } };
 * app.use('/ax/order_stat', axExecutor({ keys, handler: async (ctx) => ({ success: true }) }));
 * ```
 * Mount it before any body parser of the app (`express.json()` would consume the body the
 * signature covers).
 * The handler answers synchronously with `{success, message?, data?}` (or nothing = success),
 * throws (= `{success: false, message}`), or returns `ctx.accepted()` to answer 202 and report
 * later with `ctx.report(result)` (needs `client`).
 */
import express, { type Express, type Request, type Response, type Router } from 'express';
import { z } from 'zod';
import type { AxClient, AxResult } from './client.js';
import { DEFAULT_MAX_SKEW_MS, verifySignature, type SignatureProblem, type TeamKeys } from './signature.js';

/** The body ax sends. */
export const executionRequestSchema = z.object({
  executionId: z.string().min(1),
  instanceId: z.string().min(1),
  taskName: z.string().min(1),
  team: z.string().min(1).optional(),
  bizDate: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  expectedTime: z.string().min(1),
  attempt: z.int().min(1),
  params: z.record(z.string(), z.unknown()),
  traceId: z.string(),
  deadline: z.iso.datetime({ offset: true }),
});

/** The body ax sends, parsed. */
export type ExecutionRequestBody = z.output<typeof executionRequestSchema>;

const ACCEPTED = Symbol('ax.accepted');
/** Returned by a handler (through `ctx.accepted()`) to answer 202. */
export interface Accepted {
  readonly [ACCEPTED]: true;
}

/** What a handler gets. */
export interface ExecutionContext extends ExecutionRequestBody {
  /** `<taskName>:<expectedTime>:<runNo>`: equal across retries of one run, new per rerun (R18). */
  readonly idempotencyKey: string;
  /** The worker that sent it. */
  readonly workerId: string;
  /** Aborted at the deadline (or when the worker hangs up): stop synchronous work then. */
  readonly signal: AbortSignal;
  /** Answer 202 now and report later (`return ctx.accepted()`). */
  accepted(): Accepted;
  /** Reports the final result of this execution (after `accepted()`); needs `client`. */
  report(result: AxResult): Promise<{ duplicate: boolean }>;
  /** Claims this run for this execution; false = another execution holds it, do not do the work. */
  claim(): Promise<boolean>;
}

/** What a handler returns. */
export type HandlerResult = AxResult | Accepted | void;

/** Options of `axExecutor`. */
export interface AxExecutorOptions {
  /**
   * The team's executor keys (`GET /api/v1/teams/{team}/executor-key`): version → key. Hold the
   * previous version too while a rotation's grace lasts. Never the master AX_EXECUTOR_SECRET.
   */
  readonly keys: TeamKeys;
  readonly handler: (ctx: ExecutionContext) => Promise<HandlerResult> | HandlerResult;
  /** Largest accepted distance of `X-Ax-Timestamp` from this clock; default 300000 ms (5 min). */
  readonly maxSkewMs?: number;
  /** Client used by `ctx.report` / `ctx.claim` (see `createAxClient`). */
  readonly client?: AxClient;
  /** Largest accepted body; default `1mb`. */
  readonly bodyLimit?: string;
  /** Called with errors thrown by the handler (they are answered `{success: false}`); default none. */
  readonly onError?: (error: unknown, ctx: ExecutionContext) => void;
}

const REFUSALS: Record<SignatureProblem, string> = {
  MISSING_SIGNATURE: 'X-Ax-Team, X-Ax-Key-Version, X-Ax-Timestamp and X-Ax-Signature are required',
  SIGNATURE_V1: 'signature v1 is no longer accepted (this service verifies v2)',
  BAD_TIMESTAMP: 'X-Ax-Timestamp must be unix milliseconds',
  STALE_TIMESTAMP: 'the request timestamp is too far from this clock',
  WRONG_TEAM: 'signed for another team',
  UNKNOWN_KEY_VERSION: 'signed with a key version this service does not hold',
  BAD_SIGNATURE: 'the request signature is wrong',
};

function refuse(res: Response, status: number, code: string, message: string): void {
  res.status(status).json({ error: { code, message } });
}

function isAccepted(value: unknown): value is Accepted {
  return typeof value === 'object' && value !== null && (value as Partial<Accepted>)[ACCEPTED] === true;
}

/** Creates the router; mount it at the path the task's `exec.url` names. */
export function axExecutor(options: AxExecutorOptions): Router {
  if ((options as { secret?: unknown }).secret !== undefined || options.keys === undefined) {
    throw new Error('axExecutor: signature v1 (`secret`) is gone; pass `keys: { team, keys: { <version>: <key> } }` from GET /api/v1/teams/{team}/executor-key');
  }
  const router = express.Router();
  const maxSkewMs = options.maxSkewMs ?? DEFAULT_MAX_SKEW_MS;
  const noClient = (): never => {
    throw new Error('axExecutor: ctx.report/ctx.claim need the `client` option (createAxClient)');
  };

  router.post('/', express.raw({ type: () => true, limit: options.bodyLimit ?? '1mb' }), (req: Request, res: Response) => {
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const problem = verifySignature({
      keys: options.keys,
      received: {
        team: req.get('x-ax-team'),
        keyVersion: req.get('x-ax-key-version'),
        timestamp: req.get('x-ax-timestamp'),
        signature: req.get('x-ax-signature'),
        previousSignature: req.get('x-ax-previous-signature'),
      },
      method: req.method,
      // the path as the worker sent it: the router sees it relative to its mount point
      path: req.originalUrl,
      body: raw,
      maxSkewMs,
    });
    if (problem !== null) {
      refuse(res, 401, problem, REFUSALS[problem]);
      return;
    }
    let json: unknown;
    try {
      json = JSON.parse(raw.toString('utf8'));
    } catch {
      refuse(res, 400, 'VALIDATION_FAILED', 'the body is not JSON');
      return;
    }
    const parsed = executionRequestSchema.safeParse(json);
    if (!parsed.success) {
      refuse(res, 400, 'VALIDATION_FAILED', parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
      return;
    }
    const body = parsed.data;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new Error('deadline reached')), Math.max(0, Date.parse(body.deadline) - Date.now()));
    timer.unref();
    res.on('close', () => {
      clearTimeout(timer);
      if (!res.writableFinished) controller.abort(new Error('the worker hung up'));
    });
    const client = options.client;
    const ctx: ExecutionContext = {
      ...body,
      idempotencyKey: req.get('idempotency-key') ?? '',
      workerId: req.get('x-ax-worker') ?? '',
      signal: controller.signal,
      accepted: () => ({ [ACCEPTED]: true }),
      report: (result) => (client ? client.report(body.executionId, result) : noClient()),
      claim: () => (client ? client.claim(body.executionId) : noClient()),
    };
    void (async () => {
      try {
        const result = await options.handler(ctx);
        if (isAccepted(result)) res.status(202).json({ accepted: true });
        else res.status(200).json(result ?? { success: true });
      } catch (error) {
        options.onError?.(error, ctx);
        if (!res.headersSent) res.status(200).json({ success: false, message: error instanceof Error ? error.message : String(error) });
      } finally {
        clearTimeout(timer);
      }
    })();
  });
  return router;
}

/**
 * An express app serving several executors by path, for a service that does nothing else:
 * `http.createServer(axExecutorApp({ '/ax/order_stat': {...} })).listen(8080)`.
 */
export function axExecutorApp(routes: Readonly<Record<string, AxExecutorOptions>>): Express {
  const app = express();
  app.disable('x-powered-by');
  for (const [path, options] of Object.entries(routes)) app.use(path, axExecutor(options));
  return app;
}

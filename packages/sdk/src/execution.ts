/**
 * The framework-neutral check of an ax HTTP execution (ADMIN-API.md "HTTP executors"):
 * `verifyExecutorCall` takes the raw body bytes exactly as received, the headers and the
 * path, verifies signature v2 and the timestamp against the team's keys, validates the body
 * and returns the typed call, or a typed `ExecutorCallError` saying what to answer.
 *
 * ```ts
 * const checked = verifyExecutorCall({ rawBody, headers: req.headers, path: req.url, keys });
 * if (!checked.ok) return send(errorAnswer(checked.error));
 * checked.call.executionId; checked.call.params; checked.call.idempotencyKey;
 * ```
 */
import { z } from 'zod';
import { resolveKeys, type ExecutorKeys } from './keys.js';
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

/** A verified execution call: the body, and what the headers said. */
export interface ExecutionCall extends ExecutionRequestBody {
  /** `<taskName>:<expectedTime>:<runNo>`: equal across retries of one run, new per rerun (R18). */
  readonly idempotencyKey: string;
  /** The worker that sent it (`X-Ax-Worker`). */
  readonly workerId: string;
  /** `X-Ax-Key-Version`: the team's key version ax signed with. */
  readonly keyVersion: number;
}

/** Why a call is not run: a refused signature (401), a bad body (400/413) or a set-up mistake (500). */
export type ExecutorCallErrorCode = SignatureProblem | 'VALIDATION_FAILED' | 'BODY_TOO_LARGE' | 'RAW_BODY_UNAVAILABLE';

const STATUS: Record<ExecutorCallErrorCode, number> = {
  MISSING_SIGNATURE: 401,
  SIGNATURE_V1: 401,
  BAD_TIMESTAMP: 401,
  STALE_TIMESTAMP: 401,
  WRONG_TEAM: 401,
  UNKNOWN_KEY_VERSION: 401,
  BAD_SIGNATURE: 401,
  VALIDATION_FAILED: 400,
  BODY_TOO_LARGE: 413,
  RAW_BODY_UNAVAILABLE: 500,
};

const REFUSALS: Record<SignatureProblem, string> = {
  MISSING_SIGNATURE: 'X-Ax-Team, X-Ax-Key-Version, X-Ax-Timestamp and X-Ax-Signature are required',
  SIGNATURE_V1: 'signature v1 is no longer accepted (this service verifies v2)',
  BAD_TIMESTAMP: 'X-Ax-Timestamp must be unix milliseconds',
  STALE_TIMESTAMP: 'the request timestamp is too far from this clock',
  WRONG_TEAM: 'signed for another team',
  UNKNOWN_KEY_VERSION: 'signed with a key version this service does not hold',
  BAD_SIGNATURE: 'the request signature is wrong',
};

/** A call that is not run, with the HTTP status to answer (`errorAnswer(error)`). */
export class ExecutorCallError extends Error {
  override readonly name = 'ExecutorCallError';
  /** 401 for a refused signature, 400 a bad body, 413 too large, 500 a set-up mistake of the service. */
  readonly status: number;
  constructor(
    readonly code: ExecutorCallErrorCode,
    message: string = code in REFUSALS ? REFUSALS[code as SignatureProblem] : code,
  ) {
    super(message);
    this.status = STATUS[code];
  }
}

/** Headers as node (`req.headers`, lower-case names) or fetch (`Headers`) hold them. */
export type HeaderSource = Readonly<Record<string, string | readonly string[] | undefined>> | { get(name: string): string | null };

/** One header's value (names are matched case-insensitively); repeated values are joined with `, `. */
export function headerValue(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  let value = record[name];
  if (value === undefined) {
    const found = Object.keys(record).find((key) => key.toLowerCase() === name);
    value = found === undefined ? undefined : record[found];
  }
  return typeof value === 'string' || value === undefined ? value : value.join(', ');
}

/** What `verifyExecutorCall` checks. */
export interface VerifyExecutorCallInput {
  /** The body bytes exactly as received (the signature covers them), not a re-serialized object. */
  readonly rawBody: Buffer | string;
  readonly headers: HeaderSource;
  /** The request's path with its query string as received (express `req.originalUrl`, node `req.url`). */
  readonly path: string;
  /** Default `POST`. */
  readonly method?: string;
  /** The team's keys; during a rotation the current and the previous one. */
  readonly keys: ExecutorKeys;
  /** Largest accepted distance of `X-Ax-Timestamp` from `nowMs`; default 300000 ms (5 min). */
  readonly maxSkewMs?: number;
  /** Default `Date.now()`. */
  readonly nowMs?: number;
}

/** The outcome of `verifyExecutorCall`. */
export type VerifyExecutorCallResult = { readonly ok: true; readonly call: ExecutionCall } | { readonly ok: false; readonly error: ExecutorCallError };

/** `verifyExecutorCall` with keys already resolved (the adapters resolve them once). */
export function verifyResolvedCall(input: Omit<VerifyExecutorCallInput, 'keys'> & { readonly keys: TeamKeys }): VerifyExecutorCallResult {
  const { headers, rawBody } = input;
  const keyVersion = headerValue(headers, 'x-ax-key-version');
  const problem = verifySignature({
    keys: input.keys,
    received: {
      team: headerValue(headers, 'x-ax-team'),
      keyVersion,
      timestamp: headerValue(headers, 'x-ax-timestamp'),
      signature: headerValue(headers, 'x-ax-signature'),
      previousSignature: headerValue(headers, 'x-ax-previous-signature'),
    },
    method: input.method ?? 'POST',
    path: input.path,
    body: rawBody,
    maxSkewMs: input.maxSkewMs ?? DEFAULT_MAX_SKEW_MS,
    ...(input.nowMs === undefined ? {} : { nowMs: input.nowMs }),
  });
  if (problem !== null) return { ok: false, error: new ExecutorCallError(problem) };
  let json: unknown;
  try {
    json = JSON.parse(typeof rawBody === 'string' ? rawBody : rawBody.toString('utf8'));
  } catch (error) {
    return { ok: false, error: new ExecutorCallError('VALIDATION_FAILED', `the body is not JSON: ${error instanceof Error ? error.message : String(error)}`) };
  }
  const parsed = executionRequestSchema.safeParse(json);
  if (!parsed.success) {
    return { ok: false, error: new ExecutorCallError('VALIDATION_FAILED', parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')) };
  }
  return {
    ok: true,
    call: {
      ...parsed.data,
      idempotencyKey: headerValue(headers, 'idempotency-key') ?? '',
      workerId: headerValue(headers, 'x-ax-worker') ?? '',
      keyVersion: Number(keyVersion),
    },
  };
}

/**
 * Verifies one execution call: signature v2 over `rawBody` (with the current key, or during a
 * rotation the previous one), the timestamp, and the body. Never throws for a bad call; throws
 * `AxConfigError` when `keys` is unusable.
 */
export function verifyExecutorCall(input: VerifyExecutorCallInput): VerifyExecutorCallResult {
  return verifyResolvedCall({ ...input, keys: resolveKeys(input.keys, 'verifyExecutorCall') });
}

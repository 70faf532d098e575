/**
 * `createAxClient`: business code reports asynchronous results and claims its run through the
 * admin API's HMAC endpoints (ADMIN-API.md): `POST /api/v1/executions/{id}/report` and
 * `POST /api/v1/executions/{id}/claim`.
 */
import { request } from 'undici';
import { resolveKeys, type ExecutorKeys } from './keys.js';
import { signedHeaders } from './signature.js';

/** A result as the business reports it. */
export interface AxResult {
  readonly success: boolean;
  readonly message?: string;
  readonly data?: Record<string, unknown>;
}

/** Options of `createAxClient`. */
export interface AxClientOptions {
  /** The admin API, e.g. `http://ax-admin:8080` (without `/api/v1`). */
  readonly baseUrl: string;
  /**
   * The team's executor keys, as for the executors (a list of `{ team, keyVersion, key }` or
   * `{ team, keys: { <version>: <key> } }`); signs with the newest version. Never the master
   * AX_EXECUTOR_SECRET.
   */
  readonly keys: ExecutorKeys;
  /** Per request; default 10000 ms. */
  readonly timeoutMs?: number;
  /**
   * How long a report is retried while ax answers 409 `NOT_ASYNC`: a report sent right after
   * the 202 can arrive before ax recorded that answer. Default 30000 ms.
   */
  readonly notAsyncRetryMs?: number;
}

/** The admin API answered something unexpected. */
export class AxApiError extends Error {
  override readonly name = 'AxApiError';
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`ax admin API answered HTTP ${status}: ${body.slice(0, 300)}`);
  }
}

/** The report/claim client. */
export interface AxClient {
  /** Reports the final result of an accepted (202) execution. A repeat answers `{duplicate: true}`. */
  report(executionId: string, result: AxResult): Promise<{ duplicate: boolean }>;
  /**
   * Claims the run (instance, runNo) for this execution: true for the holder, false when another
   * live execution holds it (409) — then do not do the work.
   */
  claim(executionId: string): Promise<boolean>;
}

function errorCode(text: string): string | undefined {
  try {
    const code = (JSON.parse(text) as { error?: { code?: unknown } }).error?.code;
    return typeof code === 'string' ? code : undefined;
  } catch {
    return undefined;
  }
}

/** Creates a client. */
export function createAxClient(options: AxClientOptions): AxClient {
  const base = options.baseUrl.replace(/\/+$/, '');
  // a base URL with a path (behind a proxy) is part of what is signed
  const basePath = new URL(base).pathname.replace(/\/+$/, '');
  const timeoutMs = options.timeoutMs ?? 10_000;
  const keys = resolveKeys(options.keys, 'createAxClient');

  const notAsyncRetryMs = options.notAsyncRetryMs ?? 30_000;

  async function post(executionId: string, action: 'report' | 'claim', payload: unknown): Promise<{ status: number; text: string }> {
    const body = JSON.stringify(payload);
    const path = `/api/v1/executions/${encodeURIComponent(executionId)}/${action}`;
    const response = await request(`${base}${path}`, {
      method: 'POST',
      headers: signedHeaders(keys, { method: 'POST', path: `${basePath}${path}`, body }),
      body,
      signal: AbortSignal.timeout(timeoutMs),
    });
    return { status: response.statusCode, text: await response.body.text() };
  }

  return {
    async report(executionId, result) {
      const started = Date.now();
      let pauseMs = 100;
      let answer = await post(executionId, 'report', result);
      while (answer.status === 409 && errorCode(answer.text) === 'NOT_ASYNC' && Date.now() - started + pauseMs <= notAsyncRetryMs) {
        await new Promise((resolve) => setTimeout(resolve, pauseMs));
        pauseMs = Math.min(pauseMs * 2, 2_000);
        answer = await post(executionId, 'report', result);
      }
      const { status, text } = answer;
      if (status !== 200) throw new AxApiError(status, text);
      try {
        return { duplicate: (JSON.parse(text) as { duplicate?: unknown }).duplicate === true };
      } catch {
        return { duplicate: false };
      }
    },
    async claim(executionId) {
      const { status, text } = await post(executionId, 'claim', {});
      if (status === 200) return true;
      if (status === 409) return false;
      throw new AxApiError(status, text);
    },
  };
}

/**
 * `createAxClient`: business code reports asynchronous results and claims its run through the
 * admin API's HMAC endpoints (ADMIN-API.md): `POST /api/v1/executions/{id}/report` and
 * `POST /api/v1/executions/{id}/claim`.
 */
import { request } from 'undici';
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
  /** `AX_EXECUTOR_SECRET`. */
  readonly secret: string;
  /** Per request; default 10000 ms. */
  readonly timeoutMs?: number;
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

/** Creates a client. */
export function createAxClient(options: AxClientOptions): AxClient {
  const base = options.baseUrl.replace(/\/+$/, '');
  const timeoutMs = options.timeoutMs ?? 10_000;

  async function post(executionId: string, action: 'report' | 'claim', payload: unknown): Promise<{ status: number; text: string }> {
    const body = JSON.stringify(payload);
    const response = await request(`${base}/api/v1/executions/${encodeURIComponent(executionId)}/${action}`, {
      method: 'POST',
      headers: signedHeaders(options.secret, body),
      body,
      signal: AbortSignal.timeout(timeoutMs),
    });
    return { status: response.statusCode, text: await response.body.text() };
  }

  return {
    async report(executionId, result) {
      const { status, text } = await post(executionId, 'report', result);
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

/**
 * Writes the shared client (`api.ts`, GET/POST only) cannot send: PUT, PATCH and DELETE, an
 * `Idempotency-Key` header, and an answer whose `error.details` (the fields a 400 names, the
 * cycle of a 409) the page needs. Same origin, same session cookie and CSRF header as the shared
 * client; a 401 signs out as it does.
 */
import { useCallback } from 'react';
import { ApiError, requestHeaders } from '../api';
import { useSession } from '../session';

/** An API failure with the error body's `details`. */
export class DetailedApiError extends ApiError {
  constructor(
    message: string,
    status: number,
    code: string,
    /** `error.details` as the API sent it (`issues`, `cycle`, …). */
    readonly details: unknown,
  ) {
    super(message, status, code);
    this.name = 'DetailedApiError';
  }
}

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface SendOptions {
  body?: unknown;
  headers?: Record<string, string>;
}

function failureOf(status: number, statusText: string, body: unknown): DetailedApiError {
  const error = typeof body === 'object' && body !== null && 'error' in body ? (body as { error: { code?: unknown; message?: unknown; details?: unknown } }).error : null;
  if (error !== null && typeof error.message === 'string') {
    return new DetailedApiError(error.message.split('\n', 1)[0] ?? '', status, typeof error.code === 'string' ? error.code : 'HTTP', error.details);
  }
  const message = status === 403 ? 'forbidden: your role may not do this' : status === 404 ? 'not found' : `the admin API answered ${status} ${statusText}`.trim();
  return new DetailedApiError(message, status, 'HTTP', undefined);
}

/** Sends one request with the session; the parsed answer (undefined for 204). */
export async function send<T>(method: Method, path: string, options: SendOptions = {}): Promise<T> {
  const headers = requestHeaders(method, options.headers);
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(path, { method, headers, ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }) });
  } catch (err) {
    throw new DetailedApiError(`cannot reach the admin API (${err instanceof Error ? err.message : String(err)})`, 0, 'NETWORK', undefined);
  }
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch (_notJson) {
    parsed = undefined;
  }
  if (!response.ok) throw failureOf(response.status, response.statusText, parsed);
  return parsed as T;
}

/** `send`, signing out on a 401 (a revoked token), as the shared client does. */
export function useSend(): <T>(method: Method, path: string, options?: SendOptions) => Promise<T> {
  const { signOut } = useSession();
  return useCallback(
    async <T,>(method: Method, path: string, options?: SendOptions): Promise<T> => {
      try {
        return await send<T>(method, path, options);
      } catch (err) {
        if (err instanceof ApiError && err.status === 401) signOut(`Signed out: ${err.message}`);
        throw err;
      }
    },
    [signOut],
  );
}

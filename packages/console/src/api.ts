/**
 * The admin API from the browser: same origin, the session cookie (#47: set at sign-in, HttpOnly,
 * shared by every tab), JSON; writes carry the session's CSRF token in `X-AX-CSRF`. Every failure becomes an
 * `ApiError` whose message is one line for the UI — the API's own `error.message` when it sent
 * one (ADMIN-API.md "Errors"), never a stack trace.
 */

/** An API failure as shown to the user. */
export class ApiError extends Error {
  constructor(
    message: string,
    /** HTTP status; 0 when the API could not be reached. */
    readonly status: number,
    /** The API's error code (`NOT_FOUND`, `INVALID_STATE`, …) or `NETWORK` / `HTTP`. */
    readonly code: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** Query values; undefined and empty strings are left out. */
export type Query = Readonly<Record<string, string | number | boolean | undefined>>;

/** `{items, nextCursor}` of every list. */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** Builds `path?query`, skipping unset values. */
export function withQuery(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined && value !== '') params.set(key, String(value));
  }
  const text = params.toString();
  return text === '' ? path : `${path}?${text}`;
}

/** One line out of whatever the API answered for a failed request. */
function messageOf(status: number, statusText: string, body: unknown): { message: string; code: string } {
  if (typeof body === 'object' && body !== null && 'error' in body) {
    const error = (body as { error: { code?: unknown; message?: unknown; details?: { issues?: Array<{ message?: unknown }> } } }).error;
    const issues = error.details?.issues;
    // A validation failure names its fields: show the first, that is what the user must fix.
    const first = Array.isArray(issues) && typeof issues[0]?.message === 'string' ? `: ${issues[0].message}` : '';
    if (typeof error.message === 'string') {
      return { message: `${error.message}${first}`.split('\n', 1)[0] ?? '', code: typeof error.code === 'string' ? error.code : 'HTTP' };
    }
  }
  return { message: `the admin API answered ${status} ${statusText}`.trim(), code: 'HTTP' };
}

/** The header a write with the session cookie carries (the admin API's session-cookie.ts). */
export const CSRF_HEADER = 'x-ax-csrf';

/** The signed-in session's CSRF token (from `GET`/`POST /api/v1/session`); kept in memory only. */
let csrfToken: string | null = null;

/** Remembers the session's CSRF token (null at sign-out). */
export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

/** Headers of a request: JSON, and the CSRF token on writes. */
export function requestHeaders(method: string, extra: Record<string, string> = {}): Record<string, string> {
  const headers: Record<string, string> = { accept: 'application/json', ...extra };
  if (method !== 'GET' && method !== 'HEAD' && csrfToken !== null) headers[CSRF_HEADER] = csrfToken;
  return headers;
}

/** The API as pages use it, bound to the signed-in session. */
export interface ApiClient {
  get: <T>(path: string, query?: Query) => Promise<T>;
  post: <T>(path: string, body?: unknown) => Promise<T>;
  /**
   * A GET whose answer is not JSON (a log's bytes, an event stream): the response itself, once
   * its status is 2xx; a failure is an `ApiError` as for `get`. `signal` aborts it.
   */
  getRaw: (path: string, query?: Query, options?: { accept?: string; signal?: AbortSignal }) => Promise<Response>;
}

/** Sends one request (with the session cookie; `extra` headers, e.g. a bearer token to exchange). */
export async function request<T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown, extra: Record<string, string> = {}): Promise<T> {
  const headers = requestHeaders(method, extra);
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  } catch (err) {
    throw new ApiError(`cannot reach the admin API (${err instanceof Error ? err.message : String(err)})`, 0, 'NETWORK');
  }
  const text = await response.text();
  let parsed: unknown = undefined;
  if (text !== '') {
    try {
      parsed = JSON.parse(text);
    } catch (_notJson) {
      parsed = undefined;
    }
  }
  if (!response.ok) {
    const { message, code } = messageOf(response.status, response.statusText, parsed);
    throw new ApiError(message, response.status, code);
  }
  return parsed as T;
}

/** Sends one GET and hands back the response (not read) when it succeeded. */
export async function requestRaw(path: string, options: { accept?: string; signal?: AbortSignal } = {}): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(path, { headers: { accept: options.accept ?? '*/*' }, ...(options.signal === undefined ? {} : { signal: options.signal }) });
  } catch (err) {
    if (options.signal?.aborted === true) throw err;
    throw new ApiError(`cannot reach the admin API (${err instanceof Error ? err.message : String(err)})`, 0, 'NETWORK');
  }
  if (!response.ok) {
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch (_notJson) {
      parsed = undefined;
    }
    const { message, code } = messageOf(response.status, response.statusText, parsed);
    throw new ApiError(message, response.status, code);
  }
  return response;
}

/** A client whose 401s also call `onUnauthenticated` (the console then signs out). */
export function createClient(onUnauthenticated: (error: ApiError) => void): ApiClient {
  const guarded = async <T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> => {
    try {
      return await request<T>(method, path, body);
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) onUnauthenticated(err);
      throw err;
    }
  };
  return {
    get: (path, query) => guarded('GET', withQuery(path, query)),
    post: (path, body) => guarded('POST', path, body ?? {}),
    getRaw: async (path, query, options) => {
      try {
        return await requestRaw(withQuery(path, query), options);
      } catch (err) {
        if (err instanceof ApiError && err.status === 401) onUnauthenticated(err);
        throw err;
      }
    },
  };
}

/** The message of anything thrown, for an error line. */
export function errorText(err: unknown): string {
  if (err instanceof Error) return err.message.split('\n', 1)[0] ?? err.name;
  return String(err);
}

/**
 * The admin API over fetch: bearer token, JSON (or YAML) bodies, and every failure mapped to
 * one of two typed errors whose message is one line: {@link ApiRequestError} (the API answered
 * with an error) and {@link NetworkError} (it could not be reached or did not answer).
 */

/** Default time to wait for one answer, in milliseconds. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/** Collapses whitespace (newlines included) so a message stays on one line. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** The API answered 4xx/5xx. */
export class ApiRequestError extends Error {
  constructor(
    readonly status: number,
    /** The contract's `error.code`, or `HTTP_<status>` when the body is not the error shape. */
    readonly code: string,
    /** The contract's `error.message` (one line). */
    readonly apiMessage: string,
    readonly details: Record<string, unknown>,
  ) {
    super(`${apiMessage} (${status} ${code})`);
    this.name = 'ApiRequestError';
  }
}

/** The API could not be reached, or did not answer in time, or answered something unreadable. */
export class NetworkError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NetworkError';
  }
}

/** A successful answer. */
export interface ApiResponse<T = unknown> {
  readonly status: number;
  readonly body: T;
  readonly headers: Headers;
}

/** Options of {@link ApiClient}. */
export interface ApiClientOptions {
  /** Base URL without a trailing slash, e.g. `http://127.0.0.1:8080`. */
  readonly baseUrl: string;
  /** Bearer token; none = no `Authorization` header. */
  readonly token?: string | undefined;
  /** Time to wait for one answer, ms (default {@link DEFAULT_REQUEST_TIMEOUT_MS}). */
  readonly requestTimeoutMs?: number;
  /** Aborts every request (Ctrl-C during `tail`). */
  readonly signal?: AbortSignal;
}

/** What a request carries. */
export interface RequestOptions {
  readonly query?: Readonly<Record<string, string | number | boolean | undefined>>;
  /** A JSON body. */
  readonly json?: unknown;
  /** A YAML body (sent as `application/yaml`). */
  readonly yaml?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

const NETWORK_CODES: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  UND_ERR_SOCKET: 'connection closed',
  CERT_HAS_EXPIRED: 'TLS certificate has expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'TLS certificate is self-signed',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'TLS certificate cannot be verified',
};

interface CodedError {
  code?: unknown;
  message?: unknown;
  cause?: unknown;
  errors?: unknown;
}

/** Why fetch failed, in a few words. */
export function describeFetchFailure(thrown: unknown, timeoutMs: number): string {
  const e = thrown as CodedError & { name?: unknown };
  if (e?.name === 'TimeoutError') return `no answer within ${timeoutMs / 1000}s`;
  if (e?.name === 'AbortError') return 'interrupted';
  // fetch throws TypeError('fetch failed') with the socket error as its cause (sometimes an
  // AggregateError of one error per address tried).
  const candidates: CodedError[] = [];
  const cause = e?.cause as CodedError | undefined;
  if (cause !== undefined && cause !== null) {
    candidates.push(cause);
    if (Array.isArray(cause.errors)) candidates.push(...(cause.errors as CodedError[]));
  }
  candidates.push(e);
  for (const c of candidates) {
    if (typeof c?.code === 'string') return NETWORK_CODES[c.code] ?? oneLine(typeof c.message === 'string' && c.message !== '' ? c.message : c.code);
  }
  const message = typeof cause?.message === 'string' && cause.message !== '' ? cause.message : typeof e?.message === 'string' ? e.message : String(thrown);
  return oneLine(message);
}

/** Reads an error body in the contract's shape, or describes the status. */
function toRequestError(status: number, statusText: string, text: string): ApiRequestError {
  try {
    const parsed = JSON.parse(text) as { error?: { code?: unknown; message?: unknown; details?: unknown } };
    const err = parsed.error;
    if (err !== undefined && typeof err.code === 'string' && typeof err.message === 'string') {
      const details = err.details !== null && typeof err.details === 'object' ? (err.details as Record<string, unknown>) : {};
      return new ApiRequestError(status, err.code, oneLine(err.message), details);
    }
  } catch {
    // not JSON: described by its status below
  }
  return new ApiRequestError(status, `HTTP_${status}`, `the server answered ${status}${statusText === '' ? '' : ` ${statusText}`}`, {});
}

/** A small client of the admin API. */
export class ApiClient {
  readonly baseUrl: string;
  private readonly token: string | undefined;
  private readonly timeoutMs: number;
  private readonly signal: AbortSignal | undefined;

  constructor(opts: ApiClientOptions) {
    this.baseUrl = opts.baseUrl;
    this.token = opts.token === '' ? undefined : opts.token;
    this.timeoutMs = opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.signal = opts.signal;
  }

  /** The same client whose every request also ends when `signal` is aborted (`trigger --wait --timeout`). */
  withSignal(signal: AbortSignal): ApiClient {
    return new ApiClient({
      baseUrl: this.baseUrl,
      token: this.token,
      requestTimeoutMs: this.timeoutMs,
      signal: this.signal === undefined ? signal : AbortSignal.any([this.signal, signal]),
    });
  }

  /** GET a JSON resource. */
  get<T = unknown>(path: string, query?: RequestOptions['query']): Promise<ApiResponse<T>> {
    return this.request<T>('GET', path, query === undefined ? {} : { query });
  }

  /** POST, answering the decoded JSON body. */
  post<T = unknown>(path: string, opts: RequestOptions = {}): Promise<ApiResponse<T>> {
    return this.request<T>('POST', path, opts);
  }

  /** PATCH, answering the decoded JSON body. */
  patch<T = unknown>(path: string, opts: RequestOptions = {}): Promise<ApiResponse<T>> {
    return this.request<T>('PATCH', path, opts);
  }

  /** GET raw bytes (a log page): 2xx → the body as it came, else the errors of {@link request}. */
  async getBytes(path: string, query?: RequestOptions['query']): Promise<ApiResponse<Buffer>> {
    const { response, bytes } = await this.send('GET', path, { ...(query === undefined ? {} : { query }), headers: { accept: 'text/plain, */*' } });
    return { status: response.status, body: bytes, headers: response.headers };
  }

  /**
   * Opens a long-lived answer (Server-Sent Events): resolves once the headers came (within the
   * request timeout), with the body unread; a 4xx/5xx is read and thrown as {@link ApiRequestError}.
   * The stream ends when `signal` (or the client's) is aborted.
   */
  async openStream(path: string, opts: RequestOptions & { signal: AbortSignal }): Promise<Response> {
    const url = this.url(path, opts.query);
    const headers = this.headers({ accept: 'text/event-stream', ...opts.headers });
    const connect = new AbortController();
    const timer = setTimeout(() => connect.abort(new DOMException('no answer', 'TimeoutError')), this.timeoutMs);
    const signal = AbortSignal.any([connect.signal, opts.signal, ...(this.signal === undefined ? [] : [this.signal])]);
    let response: Response;
    try {
      response = await fetch(url, { method: 'GET', headers, signal });
    } catch (err) {
      throw new NetworkError(`cannot reach ${this.baseUrl}: ${describeFetchFailure(connect.signal.aborted ? connect.signal.reason : err, this.timeoutMs)}`);
    } finally {
      clearTimeout(timer);
    }
    if (!response.ok) {
      let text: string;
      try {
        text = await response.text();
      } catch (err) {
        throw new NetworkError(`cannot reach ${this.baseUrl}: ${describeFetchFailure(err, this.timeoutMs)}`);
      }
      throw toRequestError(response.status, response.statusText, text);
    }
    return response;
  }

  private url(path: string, query: RequestOptions['query']): URL {
    const url = new URL(`${this.baseUrl}${path}`);
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    return url;
  }

  private headers(extra: Readonly<Record<string, string>> | undefined): Record<string, string> {
    const headers: Record<string, string> = { accept: 'application/json', ...extra };
    if (this.token !== undefined) headers['authorization'] = `Bearer ${this.token}`;
    return headers;
  }

  /** One request; 2xx → the decoded body, else {@link ApiRequestError} or {@link NetworkError}. */
  async request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<ApiResponse<T>> {
    const { response, bytes } = await this.send(method, path, opts);
    const text = bytes.toString('utf8');
    if (text === '') return { status: response.status, body: undefined as T, headers: response.headers };
    try {
      return { status: response.status, body: JSON.parse(text) as T, headers: response.headers };
    } catch {
      throw new NetworkError(`${this.baseUrl} answered ${response.status} with a body that is not JSON; is it the ax admin API?`);
    }
  }

  /** Sends one request and reads its whole body; a 4xx/5xx is thrown. */
  private async send(method: string, path: string, opts: RequestOptions): Promise<{ response: Response; bytes: Buffer }> {
    const url = this.url(path, opts.query);
    const headers = this.headers(opts.headers);
    let body: string | undefined;
    if (opts.yaml !== undefined) {
      headers['content-type'] = 'application/yaml';
      body = opts.yaml;
    } else if (opts.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(opts.json);
    }
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const signal = this.signal === undefined ? timeout : AbortSignal.any([timeout, this.signal]);
    let response: Response;
    let bytes: Buffer;
    try {
      response = await fetch(url, { method, headers, signal, ...(body === undefined ? {} : { body }) });
      bytes = Buffer.from(await response.arrayBuffer());
    } catch (err) {
      throw new NetworkError(`cannot reach ${this.baseUrl}: ${describeFetchFailure(err, this.timeoutMs)}`);
    }
    if (!response.ok) throw toRequestError(response.status, response.statusText, bytes.toString('utf8'));
    return { response, bytes };
  }
}

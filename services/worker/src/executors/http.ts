/**
 * The `http` executor (§5, ADMIN-API.md "HTTP executors"): POSTs the instance JSON to the
 * business endpoint, signed v2 with the task's team's executor key (derived from
 * AX_EXECUTOR_SECRET, or, on an enrolled worker, given by its enrollment: executor-keys.ts;
 * during a rotation's grace also with the previous version), over a keep-alive undici agent.
 *
 * - 2xx with `{"success":bool,"message"?,"data"?}` = the result; 202 = accepted, the business
 *   reports later (R15: the slot is freed and a result with `async: true` is sent); anything
 *   else, a redirect (never followed), or no answer by the deadline = a failed attempt. The
 *   answer's `data` is checked where the result item is built (`result-data.ts`, #45): a
 *   `__proto__`/`constructor`/`prototype` key, nesting past 32 levels or more than 1 MiB of it
 *   fails this attempt alone, never the batched message its result travels in.
 * - Only hosts of `AX_HTTP_EXECUTOR_ALLOW` are called (host-allow.ts), and with an explicit list
 *   only at addresses it admits: each connection resolves the host once, checks every address
 *   (loopback, private, link-local, metadata… refused unless listed) and dials the checked
 *   address (checked-connect.ts); a refusal is a failed attempt `HOST_REFUSED: …`, no request
 *   sent. `*` (development) checks nothing. The response body read is bounded.
 * - A team's `httpAllow` (carried in the dispatch item from the team row, never from the task)
 *   narrows that list for the team's tasks: a host must pass both, and so must every address
 *   (ADMIN-API.md "Teams", #44). Each distinct team list has its own agent, so a connection
 *   checked for one list is never reused for a team whose list is narrower.
 * - A task never sends `Host` (#44): the admin API refuses it at save, and a task stored
 *   before that check has it dropped here; the Host header is undici's, from the URL.
 */
import { Agent, type Dispatcher } from 'undici';
import type { HttpExec } from '@ax/core';
import { FORBIDDEN_TASK_HEADERS, hostAllowList, narrowAllowList, signV2 } from '@ax/core';
import { NOOP_TRACER, type AxSpan, type AxTracer } from '@ax/kit';
import { checkedConnector, HostRefusedError, type HostLookup } from './checked-connect.js';
import { derivedKeys, type ExecutorKeys } from './executor-keys.js';
import type { HostAllowList } from './host-allow.js';
import { maskOutcome, NO_SECRETS, secretMask, type SecretMask } from './secret-mask.js';
import { hasSecretRef, resolveSecretables, SecretMissingError } from './secrets.js';
import { notStartedOutcome, stoppedOutcome, type ExecutionOutcome, type ExecutionRequest, type Executor } from './types.js';

/** Options of the http executor. */
export interface HttpExecutorOptions {
  /** Sent as `X-Ax-Worker`. */
  readonly workerId: string;
  /** `AX_EXECUTOR_SECRET` (an unenrolled worker); without it or `keys` every http attempt fails, saying so. */
  readonly secret: string | undefined;
  /** The keys of an enrolled worker's enrollment (executor-keys.ts); used instead of `secret`. */
  readonly keys?: ExecutorKeys;
  /** `AX_HTTP_EXECUTOR_ALLOW` matcher. */
  readonly allow: HostAllowList;
  /** How host names are resolved for the address check; default `dns.lookup` (all addresses). */
  readonly lookup?: HostLookup;
  /** Bytes of the answer read at most; default 1 MiB. A longer answer is a failed attempt. */
  readonly responseLimitBytes?: number;
  /** Bytes of the answer kept as the output tail (`AX_OUTPUT_TAIL_BYTES`). */
  readonly outputTailBytes: number;
  /** Connections per origin; default 64. */
  readonly connectionsPerOrigin?: number;
  /**
   * `AX_SECRETS_DIR`: header secretRefs are read from `<secretsDir>/<team>/<NAME>` of the
   * task's team (secrets.ts); default none — every secretRef fails with SECRET_MISSING.
   */
  readonly secretsDir?: string | undefined;
  /**
   * The business call's client span (#48), made when the request carries a `traceparent`
   * (tracing on); its context goes out as the W3C `traceparent` header. Default off.
   */
  readonly tracer?: AxTracer;
}

/** An http executor with its connection pool. */
export interface HttpExecutor extends Executor {
  /** Closes the keep-alive connections. */
  close(): Promise<void>;
}

/** Distinct endpoint URLs remembered by one executor. */
const URL_CACHE_SIZE = 1_000;
/** Distinct team allowlists with their own agent at most (teams are few; cleared when full). */
const TEAM_ROUTES_MAX = 256;

/** An allowlist's agent (its connections checked against that list) and its URL verdicts. */
interface Route {
  readonly agent: Agent;
  readonly urlOf: (text: string) => { url: URL; allowed: boolean; requestLine: string };
}

class ResponseTooLargeError extends Error {
  override readonly name = 'ResponseTooLargeError';
}

/** The body the endpoint receives (ADMIN-API.md). */
export function httpExecutionBody(request: ExecutionRequest): string {
  const { item } = request;
  return JSON.stringify({
    executionId: item.executionId,
    instanceId: item.instanceId,
    taskName: item.taskName,
    team: item.team,
    bizDate: item.bizDate,
    expectedTime: item.expectedTime,
    attempt: item.attempt,
    params: item.params,
    traceId: item.traceId,
    deadline: new Date(request.deadlineMs).toISOString(),
  });
}

class DeadlineError extends Error {
  override readonly name = 'DeadlineError';
}

/** `request.mayStart` said no when the request was about to be written (#23). */
class NotStartedError extends Error {
  override readonly name = 'NotStartedError';
}

/**
 * One request on undici's dispatcher API: status and body (at most `limit` bytes), ended early
 * by the attempt's deadline (`DeadlineError`) or by the job's signal (cancel, shutdown). The
 * handler API instead of `undici.request`: no response stream, async iterator or
 * AbortController per request, which halved the client's CPU per call (89 → 45 µs here).
 */
function exchange(
  agent: Dispatcher,
  url: URL,
  method: HttpExec['method'],
  headers: Record<string, string>,
  body: string | undefined,
  limit: number,
  request: ExecutionRequest,
): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let status = 0;
    let abortRequest: ((error: Error) => void) | undefined;
    let settled = false;
    const finish = (error: Error | null): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.signal.removeEventListener('abort', onCancel);
      if (error === null) resolve({ status, body: chunks.length === 1 ? (chunks[0] ?? Buffer.alloc(0)) : Buffer.concat(chunks) });
      else reject(error);
    };
    const stop = (error: Error): void => {
      if (abortRequest !== undefined) abortRequest(error);
      else finish(error);
    };
    const timer = setTimeout(() => stop(new DeadlineError('deadline')), Math.max(1, request.deadlineMs - Date.now()));
    const onCancel = (): void => stop(new Error(`stopped: ${String(request.signal.reason)}`));
    if (request.signal.aborted) {
      onCancel();
      return;
    }
    request.signal.addEventListener('abort', onCancel, { once: true });
    agent.dispatch(
      { origin: url.origin, path: `${url.pathname}${url.search}`, method, headers, body },
      {
        // Called by undici right before it writes the request to the socket: the last moment
        // at which the call can still be kept from the business endpoint.
        onConnect(abort: (error?: Error) => void): void {
          abortRequest = (error) => abort(error);
          if (settled) {
            abort(new Error('settled'));
            return;
          }
          const blocked = request.mayStart?.() ?? null;
          if (blocked !== null) abort(new NotStartedError(blocked));
        },
        onHeaders(statusCode: number): boolean {
          status = statusCode;
          return true;
        },
        onData(chunk: Buffer): boolean {
          size += chunk.length;
          if (size > limit) {
            stop(new ResponseTooLargeError(`the answer is larger than ${limit} bytes`));
            return false;
          }
          chunks.push(chunk);
          return true;
        },
        onComplete(): void {
          finish(null);
        },
        onError(error: Error): void {
          finish(error);
        },
      },
    );
  });
}

function tailOf(text: string, bytes: number): { outputTail: string; outputTruncated: boolean } {
  const buf = Buffer.from(text, 'utf8');
  if (buf.length <= bytes) return { outputTail: text, outputTruncated: false };
  let start = buf.length - bytes;
  while (start < buf.length && ((buf[start] ?? 0) & 0xc0) === 0x80) start++;
  return { outputTail: buf.subarray(start).toString('utf8'), outputTruncated: true };
}

const NEWLINE = Buffer.from('\n');

/** The URL as the log shows it: a password in it as `***`. */
function displayUrl(url: URL): string {
  if (url.password === '') return url.href;
  const shown = new URL(url.href);
  shown.password = '***';
  return shown.href;
}

/** Interprets a 2xx JSON answer. */
function syncResult(status: number, text: string): ExecutionOutcome {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { outcome: 'FAILED', exitCode: status, error: `answered ${status} without a JSON body {"success":…}` };
  }
  if (parsed === null || typeof parsed !== 'object' || typeof (parsed as { success?: unknown }).success !== 'boolean') {
    return { outcome: 'FAILED', exitCode: status, error: `answered ${status} without a boolean "success"` };
  }
  const answer = parsed as { success: boolean; message?: unknown; data?: unknown };
  const message = typeof answer.message === 'string' ? answer.message.slice(0, 4_000) : undefined;
  const data = answer.data !== null && typeof answer.data === 'object' && !Array.isArray(answer.data) ? (answer.data as Record<string, unknown>) : undefined;
  return answer.success
    ? { outcome: 'SUCCESS', exitCode: status, data }
    : { outcome: 'FAILED', exitCode: status, data, error: message ?? 'the endpoint answered success: false' };
}

/** Creates the http executor. */
export function createHttpExecutor(options: HttpExecutorOptions): HttpExecutor {
  const limit = options.responseLimitBytes ?? 1_048_576;
  const keyring = options.keys ?? (options.secret === undefined ? undefined : derivedKeys(options.secret));
  /** The global list's route; one more per distinct team `httpAllow`. */
  const makeRoute = (allow: HostAllowList): Route => {
    // With an explicit allow list every new connection goes through the address check; `*`
    // keeps undici's own connector (nothing to check, and the throughput figures unchanged).
    const connect = allow.any ? undefined : checkedConnector({ allow, ...(options.lookup ? { lookup: options.lookup } : {}) });
    const agent = new Agent({ keepAliveTimeout: 10_000, connections: options.connectionsPerOrigin ?? 64, ...(connect ? { connect } : {}) });
    // Parsed URLs and their allowlist verdict, by URL text: most jobs call a few endpoints, and
    // parsing plus matching per request showed in profiles. Bounded; cleared when full.
    const urls = new Map<string, { url: URL; allowed: boolean; requestLine: string }>();
    const urlOf = (text: string): { url: URL; allowed: boolean; requestLine: string } => {
      let known = urls.get(text);
      if (known === undefined) {
        if (urls.size >= URL_CACHE_SIZE) urls.clear();
        const url = new URL(text);
        known = { url, allowed: allow.allowsHost(url), requestLine: ` ${displayUrl(url)}\n` };
        urls.set(text, known);
      }
      return known;
    };
    return { agent, urlOf };
  };
  const globalRoute = makeRoute(options.allow);
  const teamRoutes = new Map<string, Route | string>();
  /** The route of a team list, or why the list cannot be used (then nothing is called). */
  const routeOf = (httpAllow: readonly string[] | undefined): Route | string => {
    if (httpAllow === undefined) return globalRoute;
    const key = JSON.stringify(httpAllow);
    let route = teamRoutes.get(key);
    if (route === undefined) {
      if (teamRoutes.size >= TEAM_ROUTES_MAX) {
        for (const r of teamRoutes.values()) if (typeof r !== 'string') void r.agent.close();
        teamRoutes.clear();
      }
      try {
        route = makeRoute(narrowAllowList(options.allow, hostAllowList(httpAllow)));
      } catch (error) {
        route = `the team's httpAllow is not valid: ${error instanceof Error ? error.message : String(error)}`;
      }
      teamRoutes.set(key, route);
    }
    return route;
  };

  const attempt = async (request: ExecutionRequest): Promise<ExecutionOutcome> => {
    const { item } = request;
    if (item.exec.type !== 'http') throw new Error(`http executor got a ${item.exec.type} exec`);
    const exec: HttpExec = item.exec;
    const route = routeOf(item.httpAllow);
    if (typeof route === 'string') return { outcome: 'FAILED', exitCode: null, error: route };
    const { agent } = route;
    const { url, allowed, requestLine } = route.urlOf(exec.url);
    if (!allowed) {
      const where = item.httpAllow === undefined ? 'AX_HTTP_EXECUTOR_ALLOW' : `AX_HTTP_EXECUTOR_ALLOW and the httpAllow of team ${item.team}`;
      return { outcome: 'FAILED', exitCode: null, error: `host ${url.host} is not in ${where}` };
    }
    if (keyring === undefined) {
      return { outcome: 'FAILED', exitCode: null, error: 'AX_EXECUTOR_SECRET is not set on the worker: http jobs cannot be signed' };
    }
    let key = keyring.keyOf(item.team, item.keyVersion);
    if (key === undefined && keyring.refresh !== undefined) {
      // A version rotated since the last answer: ask for the enrollment's keys now.
      await keyring.refresh();
      key = keyring.keyOf(item.team, item.keyVersion);
    }
    if (key === undefined) return { outcome: 'FAILED', exitCode: null, error: `${keyring.missing(item.team, item.keyVersion)}: the call cannot be signed` };
    const headers: Record<string, string> = {};
    let mask: SecretMask = NO_SECRETS;
    try {
      // No secretRef, no filesystem access (and no await).
      let values = (exec.headers ?? {}) as Record<string, string>;
      if (hasSecretRef(exec.headers)) {
        const resolved = await resolveSecretables(exec.headers ?? {}, { dir: options.secretsDir, team: item.team });
        values = resolved.values;
        mask = secretMask(resolved.secrets);
      }
      for (const [name, value] of Object.entries(values)) {
        const lower = name.toLowerCase();
        if (!FORBIDDEN_TASK_HEADERS.includes(lower)) headers[lower] = value;
      }
    } catch (error) {
      return { outcome: 'FAILED', exitCode: null, error: error instanceof SecretMissingError ? error.message : String(error) };
    }
    const output = request.output;
    output?.useMask(mask);
    output?.write('stdout', `${exec.method}${requestLine}`);
    const body = exec.method === 'GET' ? '' : httpExecutionBody(request);
    const nowMs = Date.now();
    const signed = { timestamp: String(nowMs), method: exec.method, path: `${url.pathname}${url.search}`, body };
    Object.assign(headers, {
      'content-type': 'application/json',
      'x-ax-team': item.team,
      'x-ax-key-version': String(item.keyVersion),
      'x-ax-timestamp': signed.timestamp,
      'x-ax-signature': signV2(key, signed),
      'x-ax-worker': options.workerId,
      'idempotency-key': item.idempotencyKey,
    });
    // A rotation's grace: a service still holding only the previous key keeps verifying.
    if (item.previousKeyValidUntil !== undefined && item.keyVersion > 1 && Date.parse(item.previousKeyValidUntil) > nowMs) {
      // An enrolled worker holds it while admin-api says the grace is open.
      const previous = keyring.keyOf(item.team, item.keyVersion - 1);
      if (previous !== undefined) headers['x-ax-previous-signature'] = signV2(previous, signed);
    }
    const span = request.traceparent === undefined ? undefined : startCallSpan(options.tracer ?? NOOP_TRACER, request.traceparent, exec.method, url);
    // After the task's own headers: the run's context wins over a configured `traceparent`.
    if (span !== undefined) headers.traceparent = span.traceparent;
    let answer: { status: number; body: Buffer };
    try {
      answer = await exchange(agent, url, exec.method, headers, exec.method === 'GET' ? undefined : body, limit, request);
      endCallSpan(span, answer.status);
    } catch (error) {
      endCallSpan(span, null, error instanceof Error ? error.name : 'request failed');
      if (error instanceof NotStartedError) return notStartedOutcome(error.message);
      if (error instanceof DeadlineError) return { outcome: 'TIMEOUT', exitCode: null, error: `no answer within ${item.timeoutSeconds} s` };
      if (request.signal.aborted) return { ...stoppedOutcome(request.signal.reason), exitCode: null };
      if (error instanceof HostRefusedError) return { outcome: 'FAILED', exitCode: null, error: error.message };
      const message = error instanceof Error ? error.message : String(error);
      const code = (error as { code?: unknown }).code;
      return { outcome: 'FAILED', exitCode: null, error: mask.text(`request to ${url.host} failed: ${typeof code === 'string' ? `${code} ` : ''}${message}`) };
    }
    const { status } = answer;
    const text = answer.body.toString('utf8');
    if (output !== undefined) {
      const { body } = answer;
      const parts = [Buffer.from(`HTTP ${status}\n`, 'latin1'), body];
      if (body.length > 0 && body[body.length - 1] !== 0x0a) parts.push(NEWLINE);
      output.write('stdout', Buffer.concat(parts));
    }
    // The whole body is masked before the cut, so no value is split by it.
    const tail = tailOf(mask.text(text), options.outputTailBytes);
    if (status === 202) return { outcome: 'SUCCESS', exitCode: 202, async: true, ...tail };
    if (status >= 200 && status < 300) return { ...maskOutcome(mask, syncResult(status, text)), ...tail };
    if (status >= 300 && status < 400) {
      return { outcome: 'FAILED', exitCode: status, error: `answered ${status} (redirects are not followed)`, ...tail };
    }
    return { outcome: 'FAILED', exitCode: status, error: `answered HTTP ${status}`, ...tail };
  };

  /**
   * One attempt. Its log (stdout): the request line (method and URL, a password in it shown as
   * `***`, resolved secrets masked by the log), the status line and the answer's body (at most
   * `responseLimitBytes`, 1 MiB); a failure's error goes to stderr.
   */
  const run = (request: ExecutionRequest): Promise<ExecutionOutcome> => {
    const output = request.output;
    if (output === undefined) return attempt(request);
    return attempt(request).then((outcome) => {
      if (outcome.error !== undefined) output.write('stderr', `${outcome.error}\n`);
      return outcome;
    });
  };

  return {
    run,
    async close(): Promise<void> {
      const routes = [globalRoute, ...[...teamRoutes.values()].filter((r): r is Route => typeof r !== 'string')];
      teamRoutes.clear();
      await Promise.all(routes.map((r) => r.agent.close()));
    },
  };
}

/** The business call's client span (#48): semantic-convention names, the URL without its query (secrets live there). */
function startCallSpan(tracer: AxTracer, parent: string, method: string, url: URL): AxSpan {
  return tracer.startSpan(method, {
    parent,
    kind: 'client',
    attributes: {
      'http.request.method': method,
      'server.address': url.hostname,
      'server.port': Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
      'url.full': `${url.protocol}//${url.host}${url.pathname}`,
    },
  });
}

function endCallSpan(span: AxSpan | undefined, status: number | null, error?: string): void {
  if (span === undefined) return;
  if (status !== null) span.setAttributes({ 'http.response.status_code': status });
  if (status === null || status >= 400) span.fail(error ?? `HTTP ${status}`);
  span.end();
}

/**
 * The express app of the admin API, built from injected dependencies (main.ts wires the real
 * clients; tests run it in-process against a test database). Every route comes from the
 * registry (route.ts): auth → content type → body → validation → handler; errors become the
 * contract's error body (errors.ts).
 */
import express, { type Express, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { formatPath, jsonSizeExcess, structureProblems, toError, type Issue } from '@ax/core';
import { AuthFailureLimiter, authenticate, requireRole, type Principal } from './auth.js';
import { authenticateSession } from './console-sessions.js';
import { mountConsole } from './console.js';
import { verifySignedRequest } from './hmac-verify.js';
import { authenticateWorker } from './worker-auth.js';
import { ApiError, errorMiddleware, notFound, sendError, toApiError, validationFailed } from './errors.js';
import { sendJson } from './json-reply.js';
import { buildOpenApiDocument } from './openapi.js';
import { expressPath, parseBody, zodIssues, type RouteSpec } from './route.js';
import { adminRoutes } from './routes/admin.js';
import { alertRoutes } from './routes/alerts.js';
import { calendarRoutes } from './routes/calendars.js';
import { edgeRoutes } from './routes/edges.js';
import { enrollmentRoutes } from './routes/enrollments.js';
import { executionRoutes } from './routes/executions.js';
import { instanceRoutes } from './routes/instances.js';
import { logRoutes } from './routes/logs.js';
import { dispatchStatusRoutes } from './routes/dispatch-status.js';
import { opsRoutes } from './routes/ops.js';
import { workerDrainRoutes } from './routes/worker-drain.js';
import { rerunRoutes } from './routes/reruns.js';
import { sessionRoutes } from './routes/session.js';
import { statsRoutes } from './routes/stats.js';
import { systemRoutes } from './routes/system.js';
import { taskRoutes } from './routes/tasks.js';
import { taskVersionRoutes } from './routes/task-versions.js';
import { teamRoutes } from './routes/teams.js';
import { workerBootstrapRoutes } from './routes/worker-bootstrap.js';
import type { AppDeps, AppDepsInput } from './deps.js';
import type { EnrollmentRecord } from '@ax/store';
import { createStatsCache } from './stats-cache.js';
import { LogStreamRegistry } from './log-stream-registry.js';

/** Every API route (without the system routes). */
export const API_ROUTES: readonly RouteSpec[] = [
  ...taskRoutes,
  ...taskVersionRoutes,
  ...calendarRoutes,
  ...edgeRoutes,
  ...instanceRoutes,
  ...rerunRoutes,
  ...opsRoutes,
  ...workerDrainRoutes,
  ...dispatchStatusRoutes,
  ...workerBootstrapRoutes,
  ...enrollmentRoutes,
  ...alertRoutes,
  ...statsRoutes,
  ...sessionRoutes,
  ...adminRoutes,
  ...teamRoutes,
  ...executionRoutes,
  ...logRoutes,
];

const YAML_TYPES = new Set(['application/yaml', 'application/x-yaml', 'text/yaml', 'text/x-yaml']);

function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

function mediaType(req: Request): string {
  return (req.headers['content-type'] ?? '').split(';', 1)[0]?.trim().toLowerCase() ?? '';
}

function isJsonType(type: string): boolean {
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

/** Reads the body as a Buffer (bounded), rejecting with express's 413 error past the limit. */
function readRaw(parser: RequestHandler, req: Request, res: Response): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    parser(req, res, (err?: unknown) => {
      if (err !== undefined && err !== null) reject(toError(err));
      else resolve(Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0));
    });
  });
}

function decodeJsonBody(raw: Buffer, optional: boolean): unknown {
  if (raw.length === 0) {
    if (optional) return {};
    throw validationFailed([{ path: '', message: 'a JSON body is required' }]);
  }
  let value: unknown;
  try {
    value = JSON.parse(raw.toString('utf8'));
  } catch {
    throw validationFailed([{ path: '', message: 'the body is not valid JSON' }]);
  }
  // Sizes first (#45): one walk bounded by the caps, so that zod, and the walk for `__proto__`
  // keys below, only ever see a body of at most 20,000 values (a 1 MiB body may hold 500,000).
  // Answered 400 like any invalid body (the contract's "validation → 400"; a calendar of 10,001
  // dates was 400 before the caps), with the cap named in `details.limit`/`details.max`.
  const excess = jsonSizeExcess(value);
  if (excess !== undefined) {
    const issue: Issue = { path: formatPath(excess.path), message: excess.message };
    throw new ApiError(400, 'VALIDATION_FAILED', `invalid request: ${excess.message}`, { issues: [issue], limit: excess.limit, max: excess.max });
  }
  const problems = structureProblems(value);
  if (problems.length > 0) {
    throw validationFailed(problems.map((p): Issue => {
      const path = formatPath(p.path);
      return { path, message: path === '' ? p.detail : `${path}: ${p.detail}` };
    }));
  }
  return value;
}

/**
 * Appends one by one: `push(...many)` passes every element as an argument, and an input with
 * 100,000 issues overflowed the stack (#45; the importer caps its issues now, this stays safe).
 */
function append(issues: Issue[], more: readonly Issue[]): void {
  for (const issue of more) issues.push(issue);
}

/** Mounts one route. */
function mount(app: Express, route: RouteSpec, deps: AppDeps, limiter: AuthFailureLimiter): void {
  const rawParser = express.raw({ type: () => true, limit: deps.bodyLimitBytes });
  const handler = async (req: Request, res: Response): Promise<void> => {
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const labels = { method: req.method, route: route.path };
      deps.apiMetrics.requests.inc({ ...labels, status: String(res.statusCode) });
      deps.apiMetrics.duration.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
    });
    let principal: Principal | null = null;
    let signedTeam: string | null = null;
    let enrollment: EnrollmentRecord | null = null;
    let raw: Buffer = Buffer.alloc(0);
    try {
      if (route.access === 'viewer' || route.access === 'operator' || route.access === 'admin') {
        // A bearer token wins (machines, axctl: unchanged); without one, the console's session cookie.
        const fromSession = req.headers.authorization === undefined ? await authenticateSession(deps, req) : null;
        if (fromSession === null) principal = await authenticate(deps.pool, limiter, req, route.access);
        else {
          principal = fromSession;
          requireRole(fromSession, route.access);
        }
      } else if (route.access === 'worker') {
        enrollment = await authenticateWorker(deps.pool, limiter, req);
      }
      if (route.body !== undefined || route.access === 'hmac') {
        if (hasBody(req)) {
          const type = mediaType(req);
          const wantsYaml = route.body?.kind === 'yaml';
          const ok = wantsYaml ? YAML_TYPES.has(type) : isJsonType(type);
          if (!ok) {
            throw new ApiError(415, 'UNSUPPORTED_MEDIA_TYPE', `the body must be ${wantsYaml ? 'application/yaml' : 'application/json'}`, { contentType: type });
          }
          raw = await readRaw(rawParser, req, res);
        }
      }
      if (route.access === 'hmac') signedTeam = await verifySignedRequest(deps, req, raw);
    } catch (err) {
      const { error } = toApiError(err);
      if (error.status === 401 || error.status === 403 || error.status === 429) {
        deps.apiMetrics.refused.inc({ reason: error.code });
        deps.logger.warn(
          { method: req.method, route: route.path, address: limiter.clientAddress(req), status: error.status, code: error.code, ...(principal ? { actor: principal.name } : {}) },
          'request refused',
        );
      }
      throw err;
    }

    const issues: Issue[] = [];
    let params: unknown = {};
    let query: unknown = {};
    let body: unknown = undefined;
    if (route.params !== undefined) {
      const parsed = route.params.safeParse(req.params);
      if (parsed.success) params = parsed.data;
      else append(issues, zodIssues(parsed.error));
    }
    if (route.query !== undefined) {
      const parsed = route.query.safeParse(req.query);
      if (parsed.success) query = parsed.data;
      else append(issues, zodIssues(parsed.error));
    }
    if (route.body !== undefined) {
      const input = route.body.kind === 'yaml' ? raw.toString('utf8') : decodeJsonBody(raw, route.body.optional === true);
      if (route.body.kind === 'yaml' && raw.length === 0) issues.push({ path: '', message: 'a YAML body is required' });
      else {
        const parsed = await parseBody(route.body, input);
        if (parsed.ok) body = parsed.value;
        else append(issues, parsed.issues);
      }
    }
    if (issues.length > 0) throw validationFailed(issues);

    const reply = await route.handler({ params, query, body, principal, signedTeam, enrollment, deps, req, res, rawBody: raw });
    if (reply.sent === true) return;
    if (reply.body === undefined || reply.status === 204) res.status(reply.status).end();
    else await sendJson(req, res, reply.status, reply.body);
  };
  app[route.method](expressPath(route.path), handler);
}

function securityHeaders(req: Request, res: Response, next: NextFunction): void {
  res.setHeader('x-content-type-options', 'nosniff');
  res.setHeader('x-frame-options', 'DENY');
  res.setHeader('referrer-policy', 'no-referrer');
  res.setHeader('content-security-policy', "default-src 'none'; frame-ancestors 'none'");
  res.setHeader('cross-origin-resource-policy', 'same-origin');
  res.setHeader('cache-control', 'no-store');
  next();
}

function cors(origins: readonly string[]): RequestHandler {
  return (req, res, next) => {
    const origin = req.headers.origin;
    if (origin !== undefined && (origins.includes(origin) || origins.includes('*'))) {
      res.setHeader('access-control-allow-origin', origins.includes('*') ? '*' : origin);
      res.setHeader('vary', 'Origin');
      res.setHeader('access-control-allow-headers', 'authorization, content-type, idempotency-key');
      res.setHeader('access-control-allow-methods', 'GET, POST, PUT, PATCH, DELETE');
      res.setHeader('access-control-expose-headers', 'x-ax-log-size, x-ax-log-complete, x-ax-log-truncated, x-ax-log-offset, x-ax-log-next-offset, x-ax-execution-id');
      res.setHeader('access-control-max-age', '600');
      if (req.method === 'OPTIONS') {
        res.status(204).end();
        return;
      }
    }
    next();
  };
}

/** The app and a switch for `/readyz` during shutdown. */
export interface AdminApp {
  readonly app: Express;
  readonly routes: readonly RouteSpec[];
  /** From now on `/readyz` answers 503. */
  setDraining(): void;
}

/** Builds the express app. */
export function createApp(input: AppDepsInput): AdminApp {
  const deps: AppDeps = {
    ...input,
    statsCache: input.statsCache ?? createStatsCache({ maxAgeMs: 0, now: input.now }),
    logStreams: new LogStreamRegistry(input.logStreamsPerToken),
  };
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.use(securityHeaders);
  if (deps.corsOrigins.length > 0) app.use(cors(deps.corsOrigins));
  let draining = false;
  let document: Record<string, unknown> | undefined;
  const system = systemRoutes(() => (document ??= buildOpenApiDocument(routes)), () => draining);
  const routes: RouteSpec[] = [...system, ...API_ROUTES];
  const limiter = new AuthFailureLimiter(deps.authFailureLimit.max, deps.authFailureLimit.windowMs, deps.now, deps.trustedProxies);
  for (const route of routes) mount(app, route, deps, limiter);
  if (deps.consoleDir !== undefined) mountConsole(app, deps.consoleDir);
  app.use((req: Request, res: Response) => sendError(res, notFound(`${req.method} ${req.path}`)));
  app.use(errorMiddleware(deps.logger));
  return { app, routes, setDraining: () => void (draining = true) };
}

/**
 * The small HTTP server every service runs on `AX_HTTP_PORT`:
 *
 * - `GET /healthz` — 200 `{"status":"ok"}` while the process is alive (liveness).
 * - `GET /readyz` — 200 when every readiness check passes within its timeout, else 503 naming
 *   the failed checks and why (the error message only, never a stack); 503 `draining` once the
 *   service has begun to shut down.
 * - `GET /metrics` — the registry in Prometheus text format.
 *
 * A service may add routes of its own (`route`); the admin API runs express on its own port.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { Logger } from 'pino';
import { maskUrlPassword } from './config.js';
import { toError } from './errors.js';

/** A dependency the service needs to do its work (MySQL, Redis, RabbitMQ…). */
export interface ReadinessCheck {
  /** Short name shown in `/readyz`, e.g. `mysql`. */
  readonly name: string;
  /** Resolves when the dependency is usable; rejects (or times out) otherwise. */
  readonly check: (signal: AbortSignal) => Promise<void>;
}

/** A handler for an extra route; it must end the response. */
export type RouteHandler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

/** Options of `startHealthServer`. */
export interface HealthServerOptions {
  /** TCP port; 0 picks a free one (see `HealthServer.port`). */
  readonly port: number;
  /** Interface to bind; default all interfaces. */
  readonly host?: string;
  /** Registry served on `/metrics`; without it `/metrics` is 404. */
  readonly registry?: Registry;
  /** Checks run (in parallel) by `/readyz`. */
  readonly readiness?: readonly ReadinessCheck[];
  /** How long each readiness check may take; default 2000 ms. */
  readonly readinessTimeoutMs?: number;
  /** Extra routes by exact path, e.g. `{ '/debug/wheel': handler }`. */
  readonly routes?: Readonly<Record<string, RouteHandler>>;
  readonly logger: Logger;
}

/** A running health server. */
export interface HealthServer {
  /** The bound port (useful with `port: 0`). */
  readonly port: number;
  /** `http://127.0.0.1:<port>` (or the bound host). */
  readonly url: string;
  /** Adds or replaces an extra route. */
  route(path: string, handler: RouteHandler): void;
  /** From now on `/readyz` answers 503 `draining` (call at the start of shutdown). */
  setDraining(): void;
  /** Stops listening and closes open connections. */
  close(): Promise<void>;
}

/** Result of one readiness check as `/readyz` reports it. */
export interface ReadinessResult {
  readonly name: string;
  readonly ok: boolean;
  /** Why it failed (message only). */
  readonly error?: string;
  readonly durationMs: number;
}

const MAX_ERROR_CHARS = 300;

/** Runs the checks in parallel, each bounded by `timeoutMs`. */
export async function runReadinessChecks(
  checks: readonly ReadinessCheck[],
  timeoutMs: number,
): Promise<ReadinessResult[]> {
  return Promise.all(
    checks.map(async (c): Promise<ReadinessResult> => {
      const started = performance.now();
      const controller = new AbortController();
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          controller.abort();
          reject(new Error(`timed out after ${timeoutMs} ms`));
        }, timeoutMs);
      });
      try {
        await Promise.race([Promise.resolve().then(() => c.check(controller.signal)), timeout]);
        return { name: c.name, ok: true, durationMs: Math.round(performance.now() - started) };
      } catch (error) {
        let message = maskUrlPassword(toError(error).message.split('\n', 1)[0] ?? '');
        if (message.length > MAX_ERROR_CHARS) message = `${message.slice(0, MAX_ERROR_CHARS)}…`;
        return { name: c.name, ok: false, error: message || 'failed', durationMs: Math.round(performance.now() - started) };
      } finally {
        clearTimeout(timer);
      }
    }),
  );
}

function sendJson(res: ServerResponse, status: number, body: unknown, head: boolean): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
  });
  res.end(head ? undefined : text);
}

/** Starts the server; resolves once it listens. */
export async function startHealthServer(options: HealthServerOptions): Promise<HealthServer> {
  const { logger, registry } = options;
  const checks = options.readiness ?? [];
  const timeoutMs = options.readinessTimeoutMs ?? 2_000;
  const routes = new Map<string, RouteHandler>(Object.entries(options.routes ?? {}));
  let draining = false;
  let lastReady: boolean | undefined;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?', 1)[0] ?? '/';
    const extra = routes.get(path);
    if (extra) {
      await extra(req, res);
      return;
    }
    const builtIn = path === '/healthz' || path === '/readyz' || (path === '/metrics' && registry !== undefined);
    if (!builtIn) {
      sendJson(res, 404, { error: 'not found' }, false);
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      sendJson(res, 405, { error: 'method not allowed' }, false);
      return;
    }
    const head = req.method === 'HEAD';
    if (path === '/healthz') {
      sendJson(res, 200, { status: 'ok' }, head);
    } else if (path === '/readyz') {
      if (draining) {
        sendJson(res, 503, { status: 'draining' }, head);
        return;
      }
      const results = await runReadinessChecks(checks, timeoutMs);
      const ready = results.every((r) => r.ok);
      if (ready !== lastReady) {
        const failed = results.filter((r) => !r.ok).map((r) => ({ name: r.name, error: r.error }));
        if (ready) logger.info('readiness: ready');
        else logger.warn({ failed }, 'readiness: not ready');
        lastReady = ready;
      }
      sendJson(res, ready ? 200 : 503, { status: ready ? 'ready' : 'unready', checks: results }, head);
    } else if (registry) {
      const text = await registry.metrics();
      res.writeHead(200, { 'content-type': registry.contentType, 'cache-control': 'no-store' });
      res.end(head ? undefined : text);
    }
  };

  const server = http.createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      logger.error({ err: toError(error), url: req.url }, 'health server: handler failed');
      if (!res.headersSent) sendJson(res, 500, { error: 'internal error' }, false);
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 5_000;

  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error): void => reject(error);
    server.once('error', onError);
    server.listen(options.port, options.host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  server.on('error', (error) => logger.error({ err: error }, 'health server error'));

  const address = server.address() as AddressInfo;
  const urlHost =
    options.host === undefined || options.host === '0.0.0.0' || options.host === '::'
      ? '127.0.0.1'
      : address.family === 'IPv6'
        ? `[${address.address}]`
        : address.address;
  logger.info({ port: address.port }, 'health server listening');

  let closing: Promise<void> | undefined;
  return {
    port: address.port,
    url: `http://${urlHost}:${address.port}`,
    route: (path, handler) => {
      routes.set(path, handler);
    },
    setDraining: () => {
      draining = true;
    },
    close: () => {
      closing ??= new Promise<void>((resolve, reject) => {
        draining = true;
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

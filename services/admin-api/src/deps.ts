/** What the express app is built from (injected: main.ts wires real clients, tests their own). */
import type { Bus, BusAdminOptions } from '@ax/bus';
import type { Logger, Metrics, Redis, RedisKeys } from '@ax/kit';
import type { StorePool } from '@ax/store';
import type { TrustedProxies } from './client-address.js';
import type { LogStreamTimings } from './log-stream.js';
import type { LogStreamRegistry } from './log-stream-registry.js';
import type { ApiMetrics } from './metrics.js';
import type { StatsCache } from './stats-cache.js';
import type { SessionLifetimes } from './console-sessions.js';
import type { OidcSignIn } from './oidc.js';

/** The part of `@ax/bus` the admin API uses. */
export type BusPublisher = Pick<Bus, 'topology' | 'publish' | 'connected'>;

/** Dependencies and options of the app. */
export interface AppDeps {
  readonly pool: StorePool;
  readonly redis: Redis;
  readonly keys: RedisKeys;
  /** RabbitMQ publisher (cancel and report results); null = not configured (those endpoints answer 503). */
  readonly bus: BusPublisher | null;
  /**
   * RabbitMQ's management API (`AX_AMQP_MANAGEMENT_URL`, default from the first `AX_AMQP_URL`) and
   * the namespace's vhost: where worker enrollments' RabbitMQ users are made and deleted. Omitted =
   * not configured: creating and revoking enrollments answer 503.
   */
  readonly busAdmin?: BusAdminOptions;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly apiMetrics: ApiMetrics;
  /** `AX_EXECUTOR_SECRET`: HMAC key of report/claim; without it those endpoints answer 503. */
  readonly executorSecret: string | undefined;
  /** `AX_EXECUTOR_KEY_GRACE_S`: how long a rotated-out key version still verifies (default 86400). */
  readonly executorKeyGraceSeconds?: number;
  /** Accepted age of a signed request, ms (default 300000). */
  readonly hmacWindowMs: number;
  /** Largest request body, bytes (default 1 MiB). */
  readonly bodyLimitBytes: number;
  /** Origins allowed by CORS; empty = CORS off (default). */
  readonly corsOrigins: readonly string[];
  /**
   * Back-off of unknown tokens per client address: `max` in a row are answered 401, then 429 with
   * `Retry-After`; failures drain at `max` per `windowMs`, the longest wait (default 20 per 60000 ms).
   */
  readonly authFailureLimit: { readonly max: number; readonly windowMs: number };
  /** `AX_TRUSTED_PROXIES`: peers whose `X-Forwarded-For` names the client (default none). */
  readonly trustedProxies?: TrustedProxies;
  /**
   * The console's build folder (`@ax/console`'s `dist/`), served at `/`; null = not built (its
   * paths answer 503); omitted = no console at all (unknown paths are JSON 404s). main.ts sets it.
   */
  readonly consoleDir?: string | null;
  /** `AX_TRACE_URL_TEMPLATE`: a trace's URL with `{traceId}`, answered by `GET /status` for the console's links (#48); default null. */
  readonly traceUrlTemplate?: string | null;
  /** Poll, heartbeat, give-up and token-check timings of log streams (SSE); default `DEFAULT_LOG_STREAM_TIMINGS` (400 ms, 15 s, 60 s, 5 s). */
  readonly logStream?: LogStreamTimings;
  /** `AX_SESSION_IDLE_S` and `AX_SESSION_MAX_S`: lifetimes of console sessions (default 1 h idle, 12 h in all). */
  readonly sessions?: SessionLifetimes;
  /** OIDC sign-in (`AX_OIDC_*`); omitted or null = only token sign-in. */
  readonly oidc?: OidcSignIn | null;
  /** Milliseconds now (default `Date.now`). */
  readonly now: () => number;
  /** The dashboard figures' cache (`AX_STATS_MAX_AGE_MS`, stats-cache.ts). */
  readonly statsCache: StatsCache;
  /** The open log streams by token (log-stream-registry.ts), limited by `AX_LOG_STREAMS_PER_TOKEN`. */
  readonly logStreams: LogStreamRegistry;
}

/** What `createApp` is given: {@link AppDeps}, some of them defaulted. */
export type AppDepsInput = Omit<AppDeps, 'statsCache' | 'logStreams'> & {
  /** The dashboard figures' cache; default one of max age 0: every request computes them. */
  readonly statsCache?: StatsCache;
  /** `AX_LOG_STREAMS_PER_TOKEN`: log streams one token may hold open at once (default 10). */
  readonly logStreamsPerToken?: number;
};

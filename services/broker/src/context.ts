/** What every part of a broker shares. */
import type { Bus } from '@ax/bus';
import type { AxTracer, Logger, Redis, RedisKeys } from '@ax/kit';
import type { StorePool, TaskDefinitionCache } from '@ax/store';
import type { AckClocks } from './ack-clocks.js';
import type { BacklogHolds } from './backlog-deferral.js';
import type { BrokerConfig } from './config.js';
import type { LinkMonitor } from './links.js';
import type { BrokerMetrics } from './metrics.js';
import type { RateLimiter } from './rate-limit.js';
import type { Reservations } from './reservations.js';
import type { TeamDirectory } from './team-directory.js';
import type { WorkerPresence } from './worker-presence.js';
import type { WorkerDirectory } from './workers.js';

/** The clients, configuration and shared state of one broker. */
export interface BrokerContext {
  readonly config: BrokerConfig;
  readonly pool: StorePool;
  readonly redis: Redis;
  readonly keys: RedisKeys;
  readonly bus: Bus;
  readonly logger: Logger;
  readonly metrics: BrokerMetrics;
  readonly reservations: Reservations;
  readonly rateLimiter: RateLimiter;
  readonly workers: WorkerDirectory;
  readonly links: LinkMonitor;
  /** Workers whose AMQP consumer went missing, watched for the fast lost-worker signal (R14). */
  readonly presence: WorkerPresence;
  /** Validated task definitions by id and version (parsed once per version, not per batch). */
  readonly definitions: TaskDefinitionCache;
  /** Teams' key versions and limits (refreshed with the definitions). */
  readonly teams: TeamDirectory;
  /** Confirmed dispatches whose ACK deadline is written a moment later (R8). */
  readonly ackClocks: AckClocks;
  /** Worker pools whose backlog holds, low-priority instances deferred (backlog-deferral.ts, #22). */
  readonly backlogHolds: BacklogHolds;
  /** When this broker last claimed while every slot was taken (see `claimSize` in dispatch.ts). */
  readonly claimPace: { lastSmallClaimAtMs: number };
  /** Random numbers in [0, 1) (routing ties, retry jitter). */
  readonly random: () => number;
  /** Claim and dispatch spans (#48); `NOOP_TRACER` when tracing is off. */
  readonly tracer: AxTracer;
  /** Runs the retries pass (RETRY_WAIT → PENDING) in `delayMs`, unless an earlier run is set (wakeups.ts). */
  wakeRetriesIn(delayMs: number): void;
  /** Runs the timers pass in `delayMs` (the next ACK expiry), unless an earlier run is set (wakeups.ts). */
  wakeTimersIn(delayMs: number): void;
  /** Asks the dispatch loop to run again soon (a slot was freed, an instance became PENDING). */
  wakeDispatch(): void;
  /** Tells schedulers that instances reached final states (DAG evaluation, §3). */
  notifyFinished(taskNames: readonly string[], bizDates: readonly string[]): void;
}

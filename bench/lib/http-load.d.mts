/** Types of ./http-load.mjs (the closed-loop HTTP load of the history scenario). */
export interface ClosedLoopOptions {
  baseUrl: string;
  headers?: Record<string, string>;
  concurrency: number;
  requests: number;
  pathOf: (i: number) => string;
  /** Seconds after which no request is sent and any unanswered one is given up. Default: no limit. */
  maxS?: number;
}

export interface ClosedLoopResult {
  /** Requests answered or given up. */
  requests: number;
  /** Whether `maxS` ended the run before `requests` were sent. */
  stoppedByTime: boolean;
  concurrency: number;
  /** Non-200 answers and requests that failed or were given up. */
  failed: number;
  /** The first five of those, as `status path` or `path: error`. */
  failures: string[];
  /** Latency percentiles and maximum of the requests answered or given up, ms (stats.mjs `summarize`); null when none was sent. */
  p50Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
  perS: number;
}

export function closedLoop(options: ClosedLoopOptions): Promise<ClosedLoopResult>;

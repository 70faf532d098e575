/**
 * A closed-loop HTTP load: `concurrency` clients, each sending its next request as soon as the
 * last one answered, until `requests` were sent. Every request's path comes from `pathOf(i)`
 * (i = 0 … requests - 1), so a run spreads over ids, days and names instead of hitting one
 * cached row. `maxS` stops sending after that many seconds (a slow endpoint then reports the
 * requests it answered). Returns the latency percentiles (stats.mjs `summarize`: nearest rank,
 * 0.1 ms; null when no request was sent) and what failed.
 */
import { summarize } from './stats.mjs';

export async function closedLoop({ baseUrl, headers = {}, concurrency, requests, pathOf, maxS = Infinity }) {
  const latenciesMs = [];
  /** The first few failures, as `status path` or `path: error`; `failed` counts them all. */
  const failures = [];
  let failed = 0;
  const fail = (what) => {
    failed += 1;
    if (failures.length < 5) failures.push(what);
  };
  let next = 0;
  const startedMs = performance.now();
  const stopAtMs = startedMs + maxS * 1000;
  const client = async () => {
    for (let i = next++; i < requests && performance.now() < stopAtMs; i = next++) {
      const path = pathOf(i);
      const t0 = performance.now();
      try {
        // A request still unanswered when the time is up is abandoned and counted as failed.
        const signal = Number.isFinite(maxS) ? AbortSignal.timeout(Math.ceil(Math.max(1, stopAtMs - performance.now()) + 1_000)) : undefined;
        const res = await fetch(`${baseUrl}${path}`, { headers, signal });
        await res.arrayBuffer(); // the whole body: the client's view of the answer
        if (res.status !== 200) fail(`${res.status} ${path}`);
      } catch (error) {
        fail(`${path}: ${error instanceof Error ? error.message : String(error)}`);
      }
      latenciesMs.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, client));
  const wallMs = performance.now() - startedMs;
  const latency = summarize(latenciesMs);
  return {
    requests: latenciesMs.length,
    stoppedByTime: latenciesMs.length < requests,
    concurrency,
    failed,
    failures,
    p50Ms: latency.p50,
    p99Ms: latency.p99,
    maxMs: latency.max,
    perS: Math.round((latenciesMs.length / wallMs) * 1000),
  };
}

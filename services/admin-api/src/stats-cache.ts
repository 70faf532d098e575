/**
 * The dashboard's figures, computed once per `maxAgeMs` per day and team set however many
 * consoles ask (`GET /stats/today`, `GET /stats/hourly`).
 *
 * Why: a day's figures read every instance that became due that day and its executions: about
 * 0.4 s for 24,000 instances and 0.9 s for 55,000 on the bench's history (#24). Twenty open
 * dashboards asking every few seconds would keep MySQL computing the same answer; instead:
 * - a value younger than `maxAgeMs` is answered as it is;
 * - an older one, up to `staleMs` (default twice `maxAgeMs`), is answered too while one
 *   refresh runs behind it: under steady asking nobody waits for a refresh, and a dashboard
 *   that asks every 30 s still gets figures computed for it, not those of its last visit;
 * - a missing or too old one is computed once, every concurrent caller awaiting that one
 *   computation; a failure reaches each of them and is not kept.
 * `maxAgeMs` 0 turns the cache off (every call computes). The console's dashboard refreshes
 * every 30 s, so the default 5 s (`AX_STATS_MAX_AGE_MS`) changes nothing an operator sees.
 */

/** Options of {@link createStatsCache}. */
export interface StatsCacheOptions {
  /** How long a value is answered without a refresh, ms; 0 = no cache. */
  readonly maxAgeMs: number;
  /** How long an older value is still answered while it is refreshed, ms (default 2 × maxAgeMs). */
  readonly staleMs?: number;
  /** Most keys kept (default 1 000); the oldest written goes first. */
  readonly maxEntries?: number;
  /** Milliseconds now. */
  readonly now: () => number;
  /** Called with a background refresh's error (the stale value stays). */
  readonly onRefreshError?: (error: unknown) => void;
}

export interface StatsCache {
  /** The value of `key`, from the cache or from `compute` (see the module comment). */
  get<T>(key: string, compute: () => Promise<T>): Promise<T>;
}

interface Entry {
  value?: unknown;
  /** When `value` was computed (absent until the first computation ends). */
  computedAtMs?: number;
  /** The computation under way. */
  pending?: Promise<unknown>;
}

export function createStatsCache(opts: StatsCacheOptions): StatsCache {
  const staleMs = opts.staleMs ?? 2 * opts.maxAgeMs;
  const maxEntries = opts.maxEntries ?? 1_000;
  const entries = new Map<string, Entry>();

  const refresh = (key: string, entry: Entry, compute: () => Promise<unknown>): Promise<unknown> => {
    entry.pending ??= compute().then(
      (value) => {
        entry.value = value;
        entry.computedAtMs = opts.now();
        delete entry.pending;
        // Re-inserted: the Map's order is then the order of writes, the oldest first out.
        entries.delete(key);
        entries.set(key, entry);
        for (const oldest of entries.keys()) {
          if (entries.size <= maxEntries) break;
          entries.delete(oldest);
        }
        return value;
      },
      (error: unknown) => {
        delete entry.pending;
        if (entry.computedAtMs === undefined) entries.delete(key);
        throw error;
      },
    );
    return entry.pending;
  };

  return {
    async get<T>(key: string, compute: () => Promise<T>): Promise<T> {
      if (opts.maxAgeMs <= 0) return compute();
      let entry = entries.get(key);
      if (entry === undefined) {
        entry = {};
        entries.set(key, entry);
      }
      const ageMs = entry.computedAtMs === undefined ? Infinity : opts.now() - entry.computedAtMs;
      if (ageMs < opts.maxAgeMs) return entry.value as T;
      if (ageMs < staleMs) {
        refresh(key, entry, compute).catch((error: unknown) => opts.onRefreshError?.(error));
        return entry.value as T;
      }
      return (await refresh(key, entry, compute)) as T;
    },
  };
}

/** The cache key of a day's figures for a caller's teams (null = every team). */
export function statsKey(kind: 'today' | 'hourly', day: string, teams: readonly string[] | null): string {
  return `${kind} ${day} ${teams === null ? '*' : [...teams].sort().join(',')}`;
}

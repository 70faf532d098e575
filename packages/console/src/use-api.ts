/**
 * Loads one API resource for a page: `{data, error, loading, reload}`, optionally polled.
 * A failed refresh keeps the last data and shows the error line; a changed path reloads.
 */
import { useCallback, useEffect, useRef, useState } from 'react';
import { errorText, type Query } from './api';
import { useSession } from './session';

export interface Loaded<T> {
  data: T | undefined;
  error: string | null;
  loading: boolean;
  reload: () => void;
}

/**
 * @param path API path, or null to load nothing (yet).
 * @param options.refreshMs poll interval; 0 or absent = load once. Polling pauses while the tab is hidden.
 */
export function useApi<T>(path: string | null, query: Query = {}, options: { refreshMs?: number } = {}): Loaded<T> {
  const { client } = useSession();
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(path !== null);
  const [tick, setTick] = useState(0);
  const queryKey = JSON.stringify(query);
  const lastPath = useRef<string | null>(null);

  useEffect(() => {
    if (path === null) return;
    let live = true;
    const key = `${path}?${queryKey}`;
    // A different resource: do not show the previous one's data meanwhile.
    if (lastPath.current !== key) {
      lastPath.current = key;
      setData(undefined);
    }
    setLoading(true);
    client
      .get<T>(path, JSON.parse(queryKey) as Query)
      .then((value) => {
        if (!live) return;
        setData(value);
        setError(null);
      })
      .catch((err: unknown) => {
        if (live) setError(errorText(err));
      })
      .finally(() => {
        if (live) setLoading(false);
      });
    return () => {
      live = false;
    };
  }, [client, path, queryKey, tick]);

  const refreshMs = options.refreshMs ?? 0;
  useEffect(() => {
    if (path === null || refreshMs <= 0) return;
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') setTick((t) => t + 1);
    }, refreshMs);
    return () => clearInterval(timer);
  }, [path, refreshMs]);

  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data, error, loading, reload };
}

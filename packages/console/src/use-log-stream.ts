/**
 * One view of one execution's log for the viewer: the last page first (what a reader of a log
 * wants is its end: the error, the latest line), then, while the execution runs, the live event
 * stream from where that page ended; earlier pages on demand. Reconnects the stream from the
 * last byte it got when the connection drops (2 s later), until `event: end`.
 */
import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiError, errorText } from './api';
import { LOG_PAGE_BYTES, fetchLogPage, followLog } from './log-client';
import { addSegment, utf8Edges, type LogSegment } from './log-text';
import { useSession } from './session';
import type { LogPageHeaders, LogView } from './types';

/** Wait before the stream is opened again after it dropped, ms. */
const RECONNECT_MS = 2_000;

export interface LogStreamState {
  /** The loaded text, in order (a hole between two is output a truncated log dropped). */
  segments: LogSegment[];
  /** Bytes of the view readable so far (`X-Ax-Log-Size`, then the stream's position). */
  size: number;
  complete: boolean;
  truncated: boolean;
  /** The first page is on its way. */
  loading: boolean;
  /** An earlier page is on its way. */
  loadingEarlier: boolean;
  /** The last failure, as one line (the stream retries meanwhile unless the API refused). */
  error: string | null;
}

const INITIAL: LogStreamState = { segments: [], size: 0, complete: false, truncated: false, loading: true, loadingEarlier: false, error: null };

/** A page as a segment: whole characters only; `trimTail` also leaves out a character cut at its end (more is coming). */
function pageSegment(headers: LogPageHeaders, bytes: Uint8Array, trimTail: boolean, before = Number.POSITIVE_INFINITY): LogSegment {
  const body = bytes.subarray(0, Math.max(0, Math.min(bytes.length, before - headers.offset)));
  const edges = utf8Edges(body);
  const head = headers.offset > 0 ? edges.head : 0;
  const tail = trimTail ? edges.tail : 0;
  const start = Math.min(headers.offset + head, before);
  const end = Math.max(start, headers.offset + body.length - tail);
  return { start, end, text: new TextDecoder('utf-8').decode(body.subarray(head, body.length - tail)) };
}

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });

/** Refused for good (404, 403, 400): no point in retrying. */
const refused = (err: unknown): boolean => err instanceof ApiError && err.status >= 400 && err.status < 500;

export function useLogStream(executionId: string, view: LogView): LogStreamState & { loadEarlier: () => void } {
  const { client } = useSession();
  // The state names the log it belongs to: on a switch of view or execution, the render before
  // the effect below runs must not show the previous log's lines as this one's (nor call it
  // complete) — a reader, or a test, would take them for the new view.
  const key = `${executionId}\n${view}`;
  const [owned, setOwned] = useState<{ key: string; state: LogStreamState }>({ key, state: INITIAL });
  const state = owned.key === key ? owned.state : INITIAL;
  const segmentsRef = useRef<LogSegment[]>([]);
  segmentsRef.current = state.segments;
  const generation = useRef(0);

  useEffect(() => {
    const controller = new AbortController();
    const { signal } = controller;
    const mine = ++generation.current;
    const setState = (next: LogStreamState | ((s: LogStreamState) => LogStreamState)): void => {
      if (generation.current !== mine) return; // a later log took over
      setOwned((o) => ({ key, state: typeof next === 'function' ? next(o.key === key ? o.state : INITIAL) : next }));
    };
    setState(INITIAL);
    const run = async (): Promise<void> => {
      // The first page; when the log is longer, its last page instead.
      let page = await fetchLogPage(client, executionId, view, 0, LOG_PAGE_BYTES, signal);
      const pages = [page];
      if (page.headers.nextOffset < page.headers.size) {
        const tailFrom = Math.max(page.headers.nextOffset, page.headers.size - LOG_PAGE_BYTES);
        page = await fetchLogPage(client, executionId, view, tailFrom, LOG_PAGE_BYTES, signal);
        if (tailFrom === pages[0]?.headers.nextOffset) pages.push(page);
        else pages.splice(0, 1, page);
      }
      const last = page.headers;
      let segments: LogSegment[] = [];
      for (const p of pages) segments = addSegment(segments, pageSegment(p.headers, p.bytes, p === page && !last.complete));
      let position = segments.at(-1)?.end ?? 0;
      if (position < last.nextOffset && (segments.at(-1)?.end ?? 0) === last.offset + page.bytes.length) position = last.nextOffset;
      setState({ segments, size: last.size, complete: last.complete, truncated: last.truncated, loading: false, loadingEarlier: false, error: null });
      if (last.complete) return;

      // Live: the stream from where the page ended, until its `end`.
      while (!signal.aborted) {
        try {
          const ended = await followLog(
            client,
            executionId,
            view,
            position,
            {
              onChunk: (chunk, end) => {
                if (end <= position) return;
                const segment = { start: Math.max(chunk.offset, position), end, text: chunk.text };
                position = end;
                setState((s) => ({ ...s, segments: addSegment(s.segments, segment), size: Math.max(s.size, end), error: null }));
              },
              onEnd: (end) => setState((s) => ({ ...s, complete: end.complete !== false, truncated: end.truncated, size: end.size, error: end.complete === false ? 'the execution ended but part of its output never arrived' : null })),
            },
            signal,
          );
          if (ended) return;
        } catch (err) {
          if (signal.aborted) return;
          setState((s) => ({ ...s, error: `${errorText(err)}${refused(err) ? '' : ' (reconnecting…)'}` }));
          if (refused(err)) return;
        }
        await sleep(RECONNECT_MS, signal);
      }
    };
    run().catch((err: unknown) => {
      if (!signal.aborted) setState((s) => ({ ...s, loading: false, error: errorText(err) }));
    });
    return () => controller.abort();
  }, [client, executionId, view, key]);

  const loadEarlier = useCallback(() => {
    const first = segmentsRef.current[0];
    if (first === undefined || first.start === 0) return;
    const mine = generation.current;
    const from = Math.max(0, first.start - LOG_PAGE_BYTES);
    const setState = (next: (s: LogStreamState) => LogStreamState): void => {
      if (generation.current === mine) setOwned((o) => (o.key === key ? { key, state: next(o.state) } : o));
    };
    setState((s) => ({ ...s, loadingEarlier: true }));
    fetchLogPage(client, executionId, view, from, first.start - from)
      .then(({ headers, bytes }) => {
        // all of it dropped (a long hole of a truncated log): an empty piece at `from` marks how far back we are
        const segment = headers.offset >= first.start ? { start: from, end: from, text: '' } : pageSegment(headers, bytes, false, first.start);
        setState((s) => ({ ...s, loadingEarlier: false, error: null, segments: addSegment(s.segments, segment) }));
      })
      .catch((err: unknown) => {
        setState((s) => ({ ...s, loadingEarlier: false, error: errorText(err) }));
      });
  }, [client, executionId, view, key]);

  return { ...state, loadEarlier };
}

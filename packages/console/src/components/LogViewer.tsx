/**
 * One execution's log: stdout / stderr / both, following live while it runs (the view sticks to
 * the end until the reader scrolls up; **Follow** goes back), search with next / previous,
 * download of the whole log, line numbers, the truncation notice, earlier pages on demand.
 */
import { useEffect, useLayoutEffect, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import { errorText } from '../api';
import { downloadLog } from '../log-client';
import { findMatches, toLines } from '../log-text';
import { useSession } from '../session';
import type { LogView } from '../types';
import { useLogStream } from '../use-log-stream';
import { ErrorLine } from './ErrorLine';
import { LogLines, formatBytes } from './LogLines';

const VIEWS: ReadonlyArray<[LogView, string]> = [
  ['all', 'both'],
  ['stdout', 'stdout'],
  ['stderr', 'stderr'],
];

/** Distance from the bottom that still counts as "at the end", px. */
const BOTTOM_SLACK_PX = 8;

export function LogViewer({ executionId, view, onView }: { executionId: string; view: LogView; onView: (view: LogView) => void }) {
  const { client } = useSession();
  const log = useLogStream(executionId, view);
  const [term, setTerm] = useState('');
  const [current, setCurrent] = useState(0);
  const [following, setFollowing] = useState(true);
  const [downloadError, setDownloadError] = useState<string | null>(null);
  const [downloading, setDownloading] = useState(false);
  const followingRef = useRef(true);
  const body = useRef<HTMLDivElement>(null);
  const before = useRef({ height: 0, first: -1 });

  const first = log.segments[0];
  const fromStart = first === undefined || first.start === 0;
  const lines = useMemo(() => toLines(log.segments), [log.segments]);
  const matches = useMemo(() => findMatches(lines, term), [lines, term]);
  const loaded = log.segments.reduce((sum, s) => sum + (s.end - s.start), 0);

  const follow = (on: boolean): void => {
    followingRef.current = on;
    setFollowing(on);
    const el = body.current;
    if (on && el !== null) el.scrollTop = el.scrollHeight;
  };

  // A new log: back to following its end, no search position.
  useEffect(() => {
    follow(true);
    setCurrent(0);
  }, [executionId, view]);

  const onScroll = (): void => {
    const el = body.current;
    if (el === null) return;
    const atEnd = el.scrollHeight - el.scrollTop - el.clientHeight <= BOTTOM_SLACK_PX;
    if (atEnd !== followingRef.current) {
      followingRef.current = atEnd;
      setFollowing(atEnd);
    }
  };

  // Sticks to the end while following; keeps the reader's place when an earlier page comes in above.
  useLayoutEffect(() => {
    const el = body.current;
    if (el === null) return;
    const firstStart = first?.start ?? -1;
    if (followingRef.current) el.scrollTop = el.scrollHeight;
    else if (before.current.first >= 0 && firstStart < before.current.first) el.scrollTop += el.scrollHeight - before.current.height;
    before.current = { height: el.scrollHeight, first: firstStart };
    onScroll(); // at the end after all (nothing to scroll, or the reader was there): following again
  }, [lines, first?.start]);

  // The current hit in sight when the term or the position changes (not at every new line).
  useEffect(() => {
    body.current?.querySelector('[data-current]')?.scrollIntoView({ block: 'center' });
  }, [current, term]);

  const step = (by: number): void => {
    if (matches.length === 0) return;
    // bringing the hit into sight scrolls the box up, which stops following (onScroll)
    setCurrent((c) => (((c + by) % matches.length) + matches.length) % matches.length);
  };
  const onSearchKey = (e: KeyboardEvent<HTMLInputElement>): void => {
    if (e.key !== 'Enter') return;
    e.preventDefault();
    step(e.shiftKey ? -1 : 1);
  };
  const shown = matches.length === 0 ? 0 : Math.min(current, matches.length - 1) + 1;

  const download = async (): Promise<void> => {
    setDownloading(true);
    try {
      await downloadLog(client, executionId, view);
      setDownloadError(null);
    } catch (err) {
      setDownloadError(`download failed: ${errorText(err)}`);
    } finally {
      setDownloading(false);
    }
  };

  return (
    <div className="log-viewer" data-testid="log-viewer" data-execution={executionId} data-view={view} data-complete={String(log.complete)}>
      <div className="log-toolbar">
        <div role="group" className="log-views" aria-label="output">
          {VIEWS.map(([value, label]) => (
            <button key={value} type="button" className={value === view ? 'small' : 'small outline secondary'} aria-pressed={value === view} data-view={value} onClick={() => onView(value)}>
              {label}
            </button>
          ))}
        </div>
        <div className="log-search" role="search">
          <input
            type="search"
            name="log-search"
            placeholder="Search the loaded log"
            aria-label="Search the loaded log"
            value={term}
            onChange={(e) => {
              setTerm(e.target.value);
              setCurrent(0);
            }}
            onKeyDown={onSearchKey}
          />
          <button type="button" className="small outline secondary" aria-label="previous match" disabled={matches.length === 0} onClick={() => step(-1)}>
            ↑
          </button>
          <button type="button" className="small outline secondary" aria-label="next match" disabled={matches.length === 0} onClick={() => step(1)}>
            ↓
          </button>
          {term !== '' && (
            <small className="muted" data-testid="log-matches">
              {matches.length === 0 ? 'no match' : `${shown} of ${matches.length}`}
            </small>
          )}
        </div>
        <button type="button" className="small outline" data-action="download-log" disabled={downloading} aria-busy={downloading} onClick={() => void download()}>
          Download
        </button>
      </div>
      <ErrorLine error={log.error ?? downloadError} />
      {log.truncated && (
        <p className="log-notice" data-testid="log-truncated">
          Truncated: this attempt printed more than the log keeps (AX_LOG_MAX_BYTES); its beginning and its last 64 KiB are here, the middle was dropped.
        </p>
      )}
      {!fromStart && (
        <div className="log-earlier">
          <button type="button" className="small outline secondary" data-action="load-earlier" disabled={log.loadingEarlier} aria-busy={log.loadingEarlier} onClick={() => {
            followingRef.current = false;
            setFollowing(false);
            log.loadEarlier();
          }}>
            Load earlier
          </button>
          <small className="muted">
            {formatBytes(first?.start ?? 0)} before this not loaded; line numbers count from the first line shown
          </small>
        </div>
      )}
      <div className="log-body" ref={body} onScroll={onScroll} data-testid="log-lines" tabIndex={0} aria-label="log">
        {log.loading ? <p aria-busy="true">Loading the log…</p> : lines.length === 0 ? <p className="muted log-empty">{log.complete ? 'No output.' : 'No output yet.'}</p> : <LogLines lines={lines} matches={matches} current={shown - 1} termLength={term.length} />}
      </div>
      <div className="log-status">
        <small className="muted" data-testid="log-status">
          {log.complete ? `complete · ${formatBytes(log.size)}` : log.loading ? '' : `following live · ${formatBytes(log.size)} so far`}
          {loaded < log.size && log.complete && ` · ${formatBytes(loaded)} loaded`}
        </small>
        {!following && (
          <button type="button" className="small" data-action="follow" onClick={() => follow(true)}>
            {log.complete ? 'To the end' : 'Follow'}
          </button>
        )}
      </div>
    </div>
  );
}

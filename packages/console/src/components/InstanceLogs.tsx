/** The log of each attempt of an instance: one tab per execution, the current (latest) first. */
import { useState } from 'react';
import type { Execution, LogView } from '../types';
import { LogViewer } from './LogViewer';
import { StateBadge } from './StateBadge';

/**
 * `run 2 · attempt 1 · shard 1/3`: a rerun starts its attempts at 1 again, so once an instance
 * has more than one run the tab names the run too (#47: tabs read "attempt 1, 2, 1, 2").
 */
export function attemptLabel(e: Pick<Execution, 'runNo' | 'attempt' | 'shardIndex' | 'shardTotal'>, severalRuns: boolean): string {
  const shard = e.shardTotal !== null && e.shardTotal > 1 ? ` · shard ${(e.shardIndex ?? 0) + 1}/${e.shardTotal}` : '';
  return `${severalRuns ? `run ${e.runNo} · ` : ''}attempt ${e.attempt}${shard}`;
}

export function InstanceLogs({ executions }: { executions: readonly Execution[] }) {
  const [picked, setPicked] = useState<string | null>(null);
  const [view, setView] = useState<LogView>('all');
  // newest first: the attempt running now (or the last one) is what a reader looks for
  const ordered = [...executions].reverse();
  const severalRuns = new Set(executions.map((e) => e.runNo)).size > 1;
  const selected = ordered.find((e) => e.executionId === picked) ?? ordered[0];
  if (selected === undefined) return <p>Not dispatched yet.</p>;
  return (
    <>
      {ordered.length > 1 && (
        <div role="tablist" className="log-tabs" aria-label="attempts">
          {ordered.map((e) => (
            <button
              key={e.executionId}
              type="button"
              role="tab"
              aria-selected={e.executionId === selected.executionId}
              className={e.executionId === selected.executionId ? 'small' : 'small outline secondary'}
              data-execution={e.executionId}
              onClick={() => setPicked(e.executionId)}
            >
              {attemptLabel(e, severalRuns)} <StateBadge state={e.state} />
            </button>
          ))}
        </div>
      )}
      {ordered.length === 1 && (
        <p className="muted">
          <small>
            {attemptLabel(selected, severalRuns)} · <code>{selected.executionId}</code>
          </small>
        </p>
      )}
      <LogViewer key={selected.executionId} executionId={selected.executionId} view={view} onView={setView} />
    </>
  );
}

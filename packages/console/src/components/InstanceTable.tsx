/** Instances, newest first, each linking to its detail page; optionally with a checkbox per row for bulk actions. */
import { Link } from 'wouter';
import { between, duration, localTime, utc } from '../format';
import type { Instance } from '../types';
import { waitingTitle } from '../waiting';
import { StateBadge } from './StateBadge';
import '../styles/ops.css';

/** Checkboxes for a bulk action: which rows are chosen, and how a click changes that. */
export interface InstanceSelection {
  selected: ReadonlySet<string>;
  onToggle: (id: string) => void;
  /** The header box: every row on the page (ids given), or none. */
  onToggleAll: (ids: string[]) => void;
}

/**
 * `showTask` also shows the team column: a list of one task (its detail page) shows neither.
 * `selection` adds a checkbox column (absent: no checkboxes, as for viewers).
 */
export function InstanceTable({ instances, showTask = true, selection }: { instances: readonly Instance[]; showTask?: boolean; selection?: InstanceSelection }) {
  if (instances.length === 0) return <p>No instances.</p>;
  const ids = instances.map((i) => i.id);
  const allChosen = selection !== undefined && ids.every((id) => selection.selected.has(id));
  return (
    <div className="table-scroll">
      <table className="striped" data-testid="instance-table">
        <thead>
          <tr>
            {selection !== undefined && (
              <th>
                <input type="checkbox" aria-label="Select every instance on this page" data-testid="select-all" checked={allChosen} onChange={() => selection.onToggleAll(ids)} />
              </th>
            )}
            <th>id</th>
            {showTask && <th>task</th>}
            {showTask && <th className="hide-sm">team</th>}
            <th>state</th>
            <th>slot (UTC · local)</th>
            <th>biz date</th>
            <th className="hide-sm">trigger</th>
            <th className="hide-sm">attempt</th>
            <th>duration</th>
            <th className="hide-sm">worker</th>
          </tr>
        </thead>
        <tbody>
          {instances.map((i) => (
            <tr key={i.id} data-instance={i.id} data-state={i.state}>
              {selection !== undefined && (
                <td>
                  <input type="checkbox" aria-label={`Select instance ${i.id}`} data-select={i.id} checked={selection.selected.has(i.id)} onChange={() => selection.onToggle(i.id)} />
                </td>
              )}
              <td>
                <Link href={`/instances/${i.id}`}>#{i.id}</Link>
              </td>
              {showTask && (
                <td>
                  <Link href={`/tasks/${encodeURIComponent(i.taskName)}`}>{i.taskName}</Link>
                </td>
              )}
              {showTask && <td className="hide-sm" data-column="team">{i.team ?? '—'}</td>}
              <td>
                <StateBadge state={i.state} />
                {i.reason !== null && <small className="muted block">{i.reason}</small>}
                {i.waiting != null && (
                  <small className="muted block" data-column="waiting" title={waitingTitle(i.waiting)}>
                    waiting: {i.waiting.reason}
                  </small>
                )}
              </td>
              <td data-column="slot">
                {utc(i.expectedTime)}
                <small className="muted block" data-column="slot-local">
                  · {localTime(i.expectedTime)}
                </small>
              </td>
              <td>{i.bizDate}</td>
              <td className="hide-sm" data-column="trigger">
                {i.trigger}
                {i.runNo > 1 && <small className="muted"> run {i.runNo}</small>}
              </td>
              <td className="hide-sm">
                {i.attempt}/{i.maxAttempts}
              </td>
              <td>{duration(between(i.startedAt, i.endedAt))}</td>
              <td className="hide-sm" data-column="worker">
                {i.workerId ?? '—'}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

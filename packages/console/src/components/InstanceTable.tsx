/** Instances, newest first, each linking to its detail page. */
import { Link } from 'wouter';
import { between, duration, utc } from '../format';
import type { Instance } from '../types';
import { StateBadge } from './StateBadge';

/** `showTask` also shows the team column: a list of one task (its detail page) shows neither. */
export function InstanceTable({ instances, showTask = true }: { instances: readonly Instance[]; showTask?: boolean }) {
  if (instances.length === 0) return <p>No instances.</p>;
  return (
    <div className="table-scroll">
      <table className="striped" data-testid="instance-table">
        <thead>
          <tr>
            <th>id</th>
            {showTask && <th>task</th>}
            {showTask && <th className="hide-sm">team</th>}
            <th>state</th>
            <th>slot (UTC)</th>
            <th>biz date</th>
            <th className="hide-sm">trigger</th>
            <th className="hide-sm">attempt</th>
            <th>duration</th>
            <th className="hide-sm">worker</th>
          </tr>
        </thead>
        <tbody>
          {instances.map((i) => (
            <tr key={i.id} data-instance={i.id}>
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
              </td>
              <td>{utc(i.expectedTime)}</td>
              <td>{i.bizDate}</td>
              <td className="hide-sm">
                {i.trigger}
                {i.runNo > 1 && <small className="muted"> run {i.runNo}</small>}
              </td>
              <td className="hide-sm">
                {i.attempt}/{i.maxAttempts}
              </td>
              <td>{duration(between(i.startedAt, i.endedAt))}</td>
              <td className="hide-sm">{i.workerId ?? '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

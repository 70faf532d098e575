/** The worker registry: tags, load (running / slots), average duration, heartbeat; operators drain and undrain a worker. */
import { useState } from 'react';
import { errorText, type Page } from '../api';
import { ErrorLine } from '../components/ErrorLine';
import { Loading } from '../components/Loading';
import { age, duration } from '../format';
import { can } from '../roles';
import { useSession } from '../session';
import { useApi } from '../use-api';
import type { Worker } from '../types';

export function WorkersPage() {
  const { client, principal } = useSession();
  const workers = useApi<Page<Worker>>('/api/v1/workers', {}, { refreshMs: 5_000 });
  const [error, setError] = useState<string | null>(null);
  const operator = can(principal.role, 'operator');

  const act = async (id: string, action: 'drain' | 'undrain') => {
    const question =
      action === 'drain'
        ? `Drain ${id}? No new work is routed to it; what runs finishes. The drain ends when this worker process exits.`
        : `Undrain ${id}? New work is routed to it again.`;
    if (!window.confirm(question)) return;
    try {
      await client.post(`/api/v1/workers/${encodeURIComponent(id)}/${action}`, {});
      setError(null);
      workers.reload();
    } catch (err) {
      setError(`${id}: ${errorText(err)}`);
    }
  };

  return (
    <>
      <hgroup>
        <h2>Workers</h2>
        <p>Live registry (heartbeats); refreshed every 5 s</p>
      </hgroup>
      <ErrorLine error={error ?? workers.error} />
      {workers.data === undefined ? (
        workers.error === null && <Loading what="workers" />
      ) : workers.data.items.length === 0 ? (
        <p>No live worker: instances wait (NO_WORKER) until one registers.</p>
      ) : (
        <div className="table-scroll">
          <table className="striped" data-testid="worker-table">
            <thead>
              <tr>
                <th>worker</th>
                <th>host</th>
                <th>tags</th>
                <th>teams</th>
                <th>load</th>
                <th>cores</th>
                <th>avg duration (5 min)</th>
                <th>heartbeat</th>
                <th>clock offset</th>
                <th>state</th>
                {operator && <th />}
              </tr>
            </thead>
            <tbody>
              {workers.data.items.map((w) => (
                <tr key={w.id} data-worker={w.id}>
                  <td>
                    {w.id}
                    {w.version !== undefined && <small className="muted block">v{w.version}</small>}
                  </td>
                  <td>{w.host}</td>
                  <td>{w.tags.length === 0 ? '—' : w.tags.map((t) => <kbd key={t}>{t}</kbd>)}</td>
                  <td>{w.teams === undefined || w.teams.includes('*') ? 'all' : w.teams.map((t) => <kbd key={t}>{t}</kbd>)}</td>
                  <td className="load">
                    <progress value={w.running} max={Math.max(1, w.slots)} aria-label={`${w.running} of ${w.slots} slots`} />
                    <small>
                      {w.running}/{w.slots}
                    </small>
                  </td>
                  <td>{w.cores}</td>
                  <td>{duration(w.avgDurationMs)}</td>
                  <td>{age(w.lastHeartbeat)}</td>
                  <td>{w.clockOffsetMs == null ? '—' : `${w.clockOffsetMs} ms`}</td>
                  <td>
                    <span className={w.state === 'active' ? 'pill pill-on' : 'pill pill-off'}>{w.state}</span>
                  </td>
                  {operator && (
                    <td>
                      {w.state === 'active' ? (
                        <button type="button" className="secondary small" data-action="drain" onClick={() => void act(w.id, 'drain')}>
                          Drain
                        </button>
                      ) : (
                        <button type="button" className="small" data-action="undrain" onClick={() => void act(w.id, 'undrain')}>
                          Undrain
                        </button>
                      )}
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

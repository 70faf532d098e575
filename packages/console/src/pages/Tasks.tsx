/** Tasks by name: search (name or description), team filter, enable/disable and "run now" for operators. */
import { useState } from 'react';
import { Link, useLocation, useSearch } from 'wouter';
import { errorText, type Page } from '../api';
import { ErrorLine } from '../components/ErrorLine';
import { Loading } from '../components/Loading';
import { Notice } from '../components/Notice';
import { TeamSelect } from '../components/TeamSelect';
import { age, scheduleText, utc } from '../format';
import { can } from '../roles';
import { useSession } from '../session';
import { runNow, setEnabled } from '../task-actions';
import { useApi } from '../use-api';
import type { Task } from '../types';

const PAGE_SIZE = 100;

export function TasksPage() {
  const { client, principal } = useSession();
  // The team filter is in the URL (`/tasks?team=payments`), so a view can be shared.
  const team = new URLSearchParams(useSearch()).get('team') ?? '';
  const [, navigate] = useLocation();
  const [q, setQ] = useState('');
  const [search, setSearch] = useState('');
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors[cursors.length - 1];
  const tasks = useApi<Page<Task>>('/api/v1/tasks', { q: search, team, limit: PAGE_SIZE, cursor }, { refreshMs: 15_000 });
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<{ task: string; instanceId: string } | null>(null);
  const operator = can(principal.role, 'operator');

  const act = async (name: string, action: () => Promise<void>) => {
    setBusy(name);
    setError(null);
    try {
      await action();
      tasks.reload();
    } catch (err) {
      setError(`${name}: ${errorText(err)}`);
    } finally {
      setBusy(null);
    }
  };

  return (
    <>
      <h2>Tasks</h2>
      <form
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          setCursors([]);
          setSearch(q.trim());
        }}
      >
        <input type="search" name="q" placeholder="Search name or description" aria-label="Search tasks" value={q} onChange={(e) => setQ(e.target.value)} />
        <input type="submit" value="Search" />
      </form>
      <div className="filters">
        <TeamSelect
          value={team}
          onChange={(next) => {
            setCursors([]);
            navigate(next === '' ? '/tasks' : `/tasks?team=${encodeURIComponent(next)}`);
          }}
        />
      </div>
      {done !== null && (
        <Notice onClose={() => setDone(null)}>
          Triggered {done.task}: <Link href={`/instances/${done.instanceId}`}>instance #{done.instanceId}</Link>
        </Notice>
      )}
      <ErrorLine error={error ?? tasks.error} />
      {tasks.data === undefined ? (
        tasks.error === null && <Loading what="tasks" />
      ) : tasks.data.items.length === 0 ? (
        <p>
          {search !== '' ? `No task matches “${search}”${team === '' ? '' : ` in team ${team}`}.` : team !== '' ? `No tasks in team ${team}.` : 'No tasks yet: import job files with axctl tasks apply -f jobs.yaml.'}
        </p>
      ) : (
        <div className="table-scroll">
          <table className="striped" data-testid="task-table">
            <thead>
              <tr>
                <th>name</th>
                <th className="hide-sm">team</th>
                <th className="hide-sm">schedule</th>
                <th className="hide-sm">tags</th>
                <th>next fire (UTC)</th>
                <th className="hide-sm">last fire</th>
                <th>enabled</th>
                {operator && <th>actions</th>}
              </tr>
            </thead>
            <tbody>
              {tasks.data.items.map((t) => (
                <tr key={t.name} data-task={t.name}>
                  <td>
                    <Link href={`/tasks/${encodeURIComponent(t.name)}`}>{t.name}</Link>
                    {t.description !== '' && <small className="muted block">{t.description}</small>}
                  </td>
                  <td className="hide-sm" data-column="team">{t.team}</td>
                  <td className="hide-sm">{scheduleText(t.schedule)}</td>
                  <td className="hide-sm">{t.tags.length === 0 ? '—' : t.tags.map((tag) => <kbd key={tag}>{tag}</kbd>)}</td>
                  <td>{utc(t.nextFireTime)}</td>
                  <td className="hide-sm">{age(t.lastFireTime)}</td>
                  <td>
                    {operator ? (
                      <input
                        type="checkbox"
                        role="switch"
                        aria-label={`${t.enabled ? 'Disable' : 'Enable'} ${t.name}`}
                        checked={t.enabled}
                        disabled={busy === t.name}
                        onChange={(e) => {
                          const enabled = e.target.checked;
                          void act(t.name, async () => {
                            await setEnabled(client, t.name, enabled);
                          });
                        }}
                      />
                    ) : t.enabled ? (
                      'yes'
                    ) : (
                      'no'
                    )}
                  </td>
                  {operator && (
                    <td>
                      <button
                        type="button"
                        className="small"
                        data-action="run-now"
                        disabled={busy === t.name}
                        onClick={() =>
                          void act(t.name, async () => {
                            const instance = await runNow(client, t.name);
                            setDone({ task: t.name, instanceId: instance.id });
                          })
                        }
                      >
                        Run now
                      </button>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <div className="pager">
        {cursors.length > 0 && (
          <button type="button" className="secondary outline small" onClick={() => setCursors((c) => c.slice(0, -1))}>
            ← Previous
          </button>
        )}
        {tasks.data?.nextCursor != null && (
          <button type="button" className="secondary outline small" onClick={() => setCursors((c) => [...c, tasks.data?.nextCursor ?? ''])}>
            Next →
          </button>
        )}
      </div>
    </>
  );
}

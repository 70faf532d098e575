/**
 * Tasks by name: search (name or description), team filter, managed-by filter (a marker in the
 * "managed by" column links to it), the state of each task's last run; for operators "New task",
 * enable/disable and "Run now…" (the trigger dialog).
 */
import { useState } from 'react';
import { Link, useLocation, useSearch } from 'wouter';
import { errorText, withQuery, type Page } from '../api';
import { ErrorLine } from '../components/ErrorLine';
import { Loading } from '../components/Loading';
import type { TaskResource } from '../authoring/types';
import { Notice } from '../components/Notice';
import { Pager, usePager } from '../components/Pager';
import { StateBadge } from '../components/StateBadge';
import { TeamSelect } from '../components/TeamSelect';
import { TriggerDialog } from '../components/TriggerDialog';
import { age, scheduleText, utc } from '../format';
import { can } from '../roles';
import { useSession } from '../session';
import { askSwitch, setEnabled } from '../task-actions';
import { useApi } from '../use-api';
import '../styles/authoring.css';

const PAGE_SIZE = 100;

/** The state of a task's latest instance, linked to it, or "never". */
function LastRun({ task }: { task: TaskResource }) {
  const last = task.lastRun;
  if (last == null) return <span className="muted">never</span>;
  return (
    <Link href={`/instances/${last.instanceId}`} title={last.endedAt === null ? `instance #${last.instanceId}` : `instance #${last.instanceId}, ended ${utc(last.endedAt)}`}>
      <StateBadge state={last.state} />
    </Link>
  );
}

export function TasksPage() {
  const { client, principal } = useSession();
  // The team filter is in the URL (`/tasks?team=payments`), so a view can be shared.
  const searchParams = new URLSearchParams(useSearch());
  const team = searchParams.get('team') ?? '';
  const managedBy = searchParams.get('managedBy') ?? '';
  // The list's URL with the filters kept in it (team, managed-by marker).
  const listHref = (filters: { team?: string; managedBy?: string }): string => withQuery('/tasks', { team, managedBy, ...filters });
  const deleted = searchParams.get('deleted');
  const [, navigate] = useLocation();
  const [q, setQ] = useState('');
  const [search, setSearch] = useState('');
  const pager = usePager();
  const tasks = useApi<Page<TaskResource>>('/api/v1/tasks', { q: search, team, managedBy, limit: PAGE_SIZE, cursor: pager.cursor }, { refreshMs: 15_000 });
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [trigger, setTrigger] = useState<{ task: string; team: string } | null>(null);
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
      <div className="page-head">
        <h2>Tasks</h2>
        {operator && (
          <Link href="/tasks/new" role="button" data-action="new-task">
            New task
          </Link>
        )}
      </div>
      <form
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          pager.reset();
          setSearch(q.trim());
        }}
      >
        <input type="search" name="q" placeholder="Search name or description" aria-label="Search tasks" value={q} onChange={(e) => setQ(e.target.value)} />
        <input type="submit" value="Search" />
      </form>
      <div className="filters">
        {managedBy !== '' && (
          <span className="pill" data-testid="managed-by-filter">
            managed by <code>{managedBy}</code>{' '}
            <Link
              href={listHref({ managedBy: '' })}
              aria-label="Show tasks of every source"
              onClick={() => pager.reset()}
            >
              ×
            </Link>
          </span>
        )}
        <TeamSelect
          value={team}
          onChange={(next) => {
            pager.reset();
            navigate(listHref({ team: next }));
          }}
        />
      </div>
      {deleted !== null && (
        <Notice onClose={() => navigate(listHref({}))}>
          Deleted {deleted}: its edges went with it; its instances stay.
        </Notice>
      )}
      <ErrorLine error={error ?? tasks.error} />
      {tasks.data === undefined ? (
        tasks.error === null && <Loading what="tasks" />
      ) : tasks.data.items.length === 0 ? (
        <p>
          {search !== '' ? `No task matches “${search}”${team === '' ? '' : ` in team ${team}`}.` : managedBy !== '' ? `No tasks managed by ${managedBy}${team === '' ? '' : ` in team ${team}`}.` : team !== '' ? `No tasks in team ${team}.` : `No tasks yet: ${operator ? 'create one with “New task”, or ' : ''}import job files with axctl tasks apply -f jobs.yaml.`}
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
                <th className="hide-sm" title="the axctl apply --source that keeps the task">managed by</th>
                <th className="hide-sm">last run</th>
                <th className="hide-sm">next fire (UTC)</th>
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
                    {/* Phones: the last run goes under the name, where its column would push "Run now…" off the screen. */}
                    <span className="show-sm block">
                      <LastRun task={t} />
                    </span>
                  </td>
                  <td className="hide-sm" data-column="team">{t.team}</td>
                  <td className="hide-sm">{scheduleText(t.schedule)}</td>
                  <td className="hide-sm">{t.tags.length === 0 ? '—' : t.tags.map((tag) => <kbd key={tag}>{tag}</kbd>)}</td>
                  <td className="hide-sm" data-column="managed-by">
                    {t.managedBy === null ? (
                      <span className="muted">—</span>
                    ) : (
                      <Link href={listHref({ managedBy: t.managedBy })} title={`only the tasks of ${t.managedBy}`} onClick={() => pager.reset()}>
                        <code>{t.managedBy}</code>
                      </Link>
                    )}
                  </td>
                  <td className="hide-sm" data-column="last-run">
                    <LastRun task={t} />
                  </td>
                  <td className="hide-sm">{utc(t.nextFireTime)}</td>
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
                          const reason = askSwitch(t.name, enabled);
                          if (reason === null) return;
                          void act(t.name, async () => {
                            await setEnabled(client, t.name, enabled, reason);
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
                        onClick={() => setTrigger({ task: t.name, team: t.team })}
                      >
                        Run now…
                      </button>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {trigger !== null && <TriggerDialog task={trigger.task} team={trigger.team} onClose={() => setTrigger(null)} />}
      <Pager pager={pager} nextCursor={tasks.data?.nextCursor} labels={['← Previous', 'Next →']} />
    </>
  );
}

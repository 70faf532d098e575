/**
 * One task: its definition, the next fire times in UTC and in the task's own zone, its recent
 * instances, its kept versions (diff, and roll back for operators), and (operators) run now (through the trigger dialog), edit, enable/disable, a DAG
 * rerun for a business date and a backfill; (admins) delete, with its consequences listed.
 */
import { useState } from 'react';
import { Link, useLocation, useParams } from 'wouter';
import { errorText, type Page } from '../api';
import { ErrorLine } from '../components/ErrorLine';
import { InstanceTable } from '../components/InstanceTable';
import { Loading } from '../components/Loading';
import { ManagedBy } from '../components/ManagedBy';
import { DeleteTaskDialog } from '../authoring/DeleteTaskDialog';
import type { TaskResource } from '../authoring/types';
import { BackfillDialog } from '../components/BackfillDialog';
import { batchHref, RerunDialog } from '../components/RerunDialog';
import { TriggerDialog } from '../components/TriggerDialog';
import { TaskVersions } from './TaskVersions';
import { duration, inZone, scheduleText, utc } from '../format';
import { can } from '../roles';
import { useSession } from '../session';
import { askSwitch, setEnabled } from '../task-actions';
import { useApi } from '../use-api';
import '../styles/authoring.css';
import type { Instance } from '../types';

function Definition({ task }: { task: TaskResource }) {
  const zone = task.schedule.timezone ?? 'UTC';
  const rows: Array<[string, string]> = [
    ['team', task.team],
    ['schedule', scheduleText(task.schedule)],
    ['time zone', zone],
    ['exec', task.exec.type],
    ['owner', task.owner === '' ? '—' : task.owner],
    ['tags', task.tags.length === 0 ? '—' : task.tags.join(', ')],
    ['priority', String(task.priority)],
    ['timeout', duration(task.timeoutSeconds * 1000)],
    ['retry', task.retry.max === 0 ? 'none' : `${task.retry.max}× from ${task.retry.backoffSeconds} s, ×${task.retry.factor}`],
    ['misfire', task.misfire.policy + (task.misfire.policy === 'catch_up' ? ` (max ${task.misfire.max})` : '')],
    ['block', typeof task.block === 'string' ? task.block : `queue (at most ${task.block.queue} waiting)`],
    ['calendar', task.calendar == null ? '—' : `${task.calendar} (${task.calendarSkippedCount ?? 0} fires skipped)`],
    ['jitter', task.jitterSeconds === undefined || task.jitterSeconds === 0 ? '—' : `up to ${task.jitterSeconds} s`],
    ['pause after', task.pauseAfterFailures == null ? '—' : `${task.pauseAfterFailures} failures in a row${task.pausedReason === 'FAILURES' ? ' (paused by failures)' : ''}`],
    ['sla', task.sla == null ? '—' : [task.sla.startWithinSeconds === undefined ? null : `start ≤ ${task.sla.startWithinSeconds} s`, task.sla.finishWithinSeconds === undefined ? null : `finish ≤ ${task.sla.finishWithinSeconds} s`].filter((x) => x !== null).join(', ')],
    ['route', task.route],
    ['depends on', task.dependsOn === undefined || task.dependsOn.length === 0 ? '—' : task.dependsOn.map((d) => (d.rule === 'ALL_SUCCESS' ? d.task : `${d.task} (${d.rule})`)).join(', ')],
    ['managed by', task.managedBy ?? '—'],
    ['version', String(task.version)],
    ['last fire', utc(task.lastFireTime)],
  ];
  return (
    <>
      <table className="definition">
        <tbody>
          {rows.map(([k, v]) => (
            <tr key={k}>
              <th scope="row">{k}</th>
              <td>{v}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <details>
        <summary>Full definition (JSON)</summary>
        <pre className="output">{JSON.stringify(task, null, 2)}</pre>
      </details>
    </>
  );
}

export function TaskDetailPage() {
  const { name = '' } = useParams<{ name: string }>();
  const path = `/api/v1/tasks/${encodeURIComponent(name)}`;
  const { client, principal } = useSession();
  const [, navigate] = useLocation();
  const task = useApi<TaskResource>(path);
  const preview = useApi<{ fireTimes: string[] }>(`${path}/preview`, { count: 5 }, { refreshMs: 30_000 });
  const instances = useApi<Page<Instance>>('/api/v1/instances', { task: name, limit: 20 }, { refreshMs: 5_000 });
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [dialog, setDialog] = useState<'trigger' | 'rerun' | 'backfill' | 'delete' | null>(null);
  const operator = can(principal.role, 'operator');
  const admin = can(principal.role, 'admin');

  const act = async (action: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await action();
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  if (task.data === undefined) {
    return (
      <>
        <h2>{name}</h2>
        <ErrorLine error={task.error} />
        {task.error === null && <Loading what="the task" />}
      </>
    );
  }
  const t = task.data;
  const zone = t.schedule.timezone ?? 'UTC';
  const latestBizDate = instances.data?.items[0]?.bizDate ?? new Date().toISOString().slice(0, 10);
  return (
    <>
      <hgroup>
        <h2>{t.name}</h2>
        <p>{t.description === '' ? scheduleText(t.schedule) : t.description}</p>
      </hgroup>
      <div className="actions">
        <span className={t.enabled ? 'pill pill-on' : 'pill pill-off'}>{t.enabled ? 'enabled' : 'disabled'}</span>
        <span className="pill" data-testid="task-team" title="the team that owns this task">
          team {t.team}
        </span>
        <Link href={`/dag?root=${encodeURIComponent(t.name)}`}>DAG from here</Link>
        {operator && (
          <>
            <button type="button" data-action="run-now" disabled={busy} onClick={() => setDialog('trigger')}>
              Run now…
            </button>
            <Link href={`/tasks/${encodeURIComponent(t.name)}/edit`} role="button" className="secondary" data-action="edit">
              Edit
            </Link>
            <button
              type="button"
              className="secondary"
              data-action={t.enabled ? 'disable' : 'enable'}
              disabled={busy}
              onClick={() => {
                const reason = askSwitch(t.name, !t.enabled);
                if (reason === null) return;
                void act(async () => {
                  await setEnabled(client, t.name, !t.enabled, reason);
                  task.reload();
                });
              }}
            >
              {t.enabled ? 'Disable' : 'Enable'}
            </button>
            <button type="button" className="secondary outline" onClick={() => setDialog('rerun')}>
              Rerun a date…
            </button>
            <button type="button" className="secondary outline" data-action="backfill" onClick={() => setDialog('backfill')}>
              Backfill…
            </button>
          </>
        )}
        {admin && (
          <button type="button" className="secondary outline" data-action="delete" onClick={() => setDialog('delete')}>
            Delete…
          </button>
        )}
      </div>
      <ManagedBy source={t.managedBy} />
      <ErrorLine error={error ?? task.error} />
      <div className="grid-2">
        <section>
          <h3>Definition</h3>
          <Definition task={t} />
        </section>
        <section>
          <h3>Next fire times</h3>
          <ErrorLine error={preview.error} />
          {!t.enabled && (
            <p data-testid="disabled-fires">
              <strong>Disabled:</strong> it fires nothing until it is enabled.
              {preview.data !== undefined && preview.data.fireTimes.length > 0 && ' Once enabled, it would fire at:'}
            </p>
          )}
          {preview.data === undefined ? null : preview.data.fireTimes.length === 0 ? (
            <p>None scheduled{t.schedule.type === 'none' ? ' (manual / dependency only)' : ''}.</p>
          ) : (
            <table className={t.enabled ? 'striped' : 'striped muted'} data-testid="fire-times" data-enabled={String(t.enabled)}>
              <thead>
                <tr>
                  <th>UTC</th>
                  <th>{zone}</th>
                </tr>
              </thead>
              <tbody>
                {preview.data.fireTimes.map((f) => (
                  <tr key={f}>
                    <td>{utc(f)}</td>
                    <td>{inZone(f, zone)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>
      </div>
      <section>
        <h3>Recent instances</h3>
        <ErrorLine error={instances.error} />
        {instances.data === undefined ? instances.error === null && <Loading what="instances" /> : <InstanceTable instances={instances.data.items} showTask={false} />}
        <Link href={`/instances?task=${encodeURIComponent(t.name)}`}>All instances of {t.name} →</Link>
      </section>
      <TaskVersions key={t.version} task={t.name} current={t.version} operator={operator} onRolledBack={() => task.reload()} />
      {dialog === 'rerun' && (
        <RerunDialog
          target={{ mode: 'dag', root: t.name, bizDate: latestBizDate }}
          onClose={() => setDialog(null)}
          onDone={(_ids, batchId) => {
            // A DAG rerun is a batch: its page follows it to the end.
            setDialog(null);
            if (batchId !== null) navigate(batchHref(batchId));
          }}
        />
      )}
      {dialog === 'trigger' && <TriggerDialog task={t.name} team={t.team} onClose={() => setDialog(null)} />}
      {dialog === 'backfill' && (
        <BackfillDialog
          task={t.name}
          onClose={() => {
            setDialog(null);
            instances.reload();
          }}
        />
      )}
      {dialog === 'delete' && <DeleteTaskDialog task={t.name} onClose={() => setDialog(null)} />}
    </>
  );
}

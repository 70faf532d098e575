/**
 * Today at a glance (UTC day of the slots, as `GET /api/v1/stats/today` counts): runs,
 * failures, average trigger delay, longest run, the five tasks that failed most, and per-hour
 * charts of runs, failures and fire lag (`GET /api/v1/stats/hourly`). Refreshed every 30 s.
 * Above them, now (`GET /api/v1/status`, every 10 s): dispatch running or paused (admins of every
 * team pause and resume here, with a reason), the backlog, late runs and workers. Each card links
 * to the list behind it.
 */
import { useState } from 'react';
import { Link } from 'wouter';
import { errorText } from '../api';
import { pauseSentence, useStatus } from '../components/PauseBanner';
import { can } from '../roles';
import { useSession } from '../session';
import { ErrorLine } from '../components/ErrorLine';
import { HourlyChart, type ChartSeries } from '../components/HourlyChart';
import { Loading } from '../components/Loading';
import { duration } from '../format';
import { useApi } from '../use-api';
import type { HourStats, TodayStats } from '../types';

// Each refresh scans today's instances twice (stats/today, stats/hourly): every 30 s is plenty.
const REFRESH_MS = 30_000;

// Module constants: a chart is rebuilt only when its data changes, not on every render.
const RUNS: ChartSeries[] = [{ label: 'runs', value: (h) => h.runs, color: '#1f77b4', kind: 'bars' }];
const FAILURES: ChartSeries[] = [{ label: 'failed', value: (h) => h.failed, color: '#d62728', kind: 'bars' }];
const seconds = (ms: number | null): number | null => (ms === null ? null : ms / 1000);
const LAG: ChartSeries[] = [
  { label: 'fire lag (scheduled)', value: (h) => seconds(h.avgFireLagMs), color: '#9467bd', kind: 'line' },
  { label: 'trigger delay', value: (h) => seconds(h.avgTriggerDelayMs), color: '#ff7f0e', kind: 'line' },
];

interface FigureProps {
  name: string;
  label: string;
  value: number | null;
  text: string;
  tone?: 'bad' | 'good';
  /** The list behind the figure. */
  href?: string;
  title?: string;
  /** `stat`: today's figures (`data-stat`, as `GET /stats/today` names them); `now`: the status cards (`data-now`). */
  kind?: 'stat' | 'now';
}

function Figure({ name, label, value, text, tone, href, title, kind = 'stat' }: FigureProps) {
  const className = `figure${tone === undefined ? '' : ` figure-${tone}`}`;
  const body = (
    <>
      <small>{label}</small>
      <strong>{text}</strong>
    </>
  );
  const data = { [`data-${kind}`]: name, 'data-value': value === null ? '' : String(value) };
  return href === undefined ? (
    <article className={className} title={title} {...data}>
      {body}
    </article>
  ) : (
    <Link href={href} className={`${className} card-link`} title={title} {...data}>
      {body}
    </Link>
  );
}

/** Now: dispatch, backlog, late, workers; the pause switch for an admin of every team. */
function NowFigures() {
  const { client, principal } = useSession();
  const status = useStatus();
  const [error, setError] = useState<string | null>(null);
  const s = status.data;
  const switcher = can(principal.role, 'admin') && (principal.teams === undefined || principal.teams.includes('*'));
  const toggle = async (pause: boolean) => {
    const reason = pause ? window.prompt('Pause dispatching for every team. Why? (audited, shown on every page)') : null;
    if (pause && reason === null) return;
    if (!pause && !window.confirm('Resume dispatching for every team?')) return;
    try {
      await client.post(`/api/v1/dispatch/${pause ? 'pause' : 'resume'}`, reason === null || reason.trim() === '' ? {} : { reason: reason.trim() });
      setError(null);
      status.reload();
    } catch (err) {
      setError(errorText(err));
    }
  };
  if (s === undefined) return <ErrorLine error={status.error} />;
  const held = '/instances?state=PENDING';
  return (
    <section data-testid="now">
      <ErrorLine error={error ?? status.error} />
      <div className="figures">
        <Figure
          kind="now"
          name="dispatch"
          label="Dispatch"
          value={s.dispatch.paused ? 1 : 0}
          text={s.dispatch.paused ? 'Paused' : 'Running'}
          tone={s.dispatch.paused ? 'bad' : 'good'}
          title={s.dispatch.paused ? pauseSentence(s.dispatch) : 'every due instance is dispatched'}
        />
        <Figure
          kind="now"
          name="waiting"
          label="Waiting (due, held)"
          value={s.backlog.waiting}
          text={s.backlog.waiting === 0 ? '0' : `${s.backlog.waiting} · oldest ${duration(s.backlog.oldestDueSeconds * 1000)}`}
          tone={s.backlog.waiting > 0 ? 'bad' : undefined}
          href={held}
        />
        <Figure kind="now" name="late" label="Late (due > 60 s)" value={s.late} text={String(s.late)} tone={s.late > 0 ? 'bad' : undefined} href={held} />
        <Figure
          kind="now"
          name="workers"
          label="Workers"
          value={s.workers.live}
          text={`${s.workers.live} live${s.workers.draining > 0 ? ` · ${s.workers.draining} draining` : ''}`}
          tone={s.workers.live === 0 ? 'bad' : undefined}
          href="/workers"
        />
      </div>
      {switcher && (
        <div className="actions">
          {s.dispatch.paused ? (
            <button type="button" data-action="resume-dispatch" onClick={() => void toggle(false)}>
              Resume dispatching
            </button>
          ) : (
            <button type="button" className="secondary" data-action="pause-dispatch" onClick={() => void toggle(true)}>
              Pause dispatching…
            </button>
          )}
        </div>
      )}
    </section>
  );
}

export function DashboardPage() {
  const today = useApi<TodayStats>('/api/v1/stats/today', {}, { refreshMs: REFRESH_MS });
  const hourly = useApi<{ day: string; hours: HourStats[] }>('/api/v1/stats/hourly', {}, { refreshMs: REFRESH_MS });
  const s = today.data;
  return (
    <>
      <hgroup>
        <h2>Dashboard</h2>
        <p>Today {s?.day ?? ''} (UTC), by slot time · refreshed every {REFRESH_MS / 1000} s</p>
      </hgroup>
      <NowFigures />
      <ErrorLine error={today.error ?? hourly.error} />
      {s === undefined ? (
        today.error === null && <Loading what="today's figures" />
      ) : (
        <>
          <div className="figures">
            <Figure name="total" label="Runs today" value={s.total} text={String(s.total)} href={`/instances?from=${s.day}T00:00:00.000Z`} />
            <Figure name="succeeded" label="Succeeded" value={s.succeeded} text={String(s.succeeded)} tone="good" href={`/instances?state=SUCCESS&from=${s.day}T00:00:00.000Z`} />
            <Figure name="failed" label="Failed" value={s.failed} text={String(s.failed)} tone={s.failed > 0 ? 'bad' : undefined} href={`/instances?state=FAILED&from=${s.day}T00:00:00.000Z`} />
            <Figure name="running" label="Running" value={s.running} text={String(s.running)} href="/instances?state=RUNNING" />
            <Figure name="avgTriggerDelayMs" label="Avg trigger delay" value={s.avgTriggerDelayMs} text={duration(s.avgTriggerDelayMs)} />
            <Figure name="maxDurationMs" label="Longest run" value={s.maxDurationMs} text={duration(s.maxDurationMs)} />
          </div>
          <section>
            <h3>Top failing tasks</h3>
            {s.topFailing.length === 0 ? (
              <p data-testid="top-failing-empty">No failures today.</p>
            ) : (
              <table className="striped" data-testid="top-failing">
                <thead>
                  <tr>
                    <th>task</th>
                    <th>failures</th>
                  </tr>
                </thead>
                <tbody>
                  {s.topFailing.map((t) => (
                    <tr key={t.task} data-task={t.task} data-count={t.count}>
                      <td>
                        <Link href={`/tasks/${encodeURIComponent(t.task)}`}>{t.task}</Link>
                      </td>
                      <td>{t.count}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </section>
        </>
      )}
      {hourly.data !== undefined && (
        <section className="charts">
          <HourlyChart title="Runs per hour" unit="runs" hours={hourly.data.hours} series={RUNS} />
          <HourlyChart title="Failures per hour" unit="failures" hours={hourly.data.hours} series={FAILURES} />
          <HourlyChart title="Fire lag and trigger delay per hour (mean)" unit="seconds" hours={hourly.data.hours} series={LAG} />
        </section>
      )}
    </>
  );
}

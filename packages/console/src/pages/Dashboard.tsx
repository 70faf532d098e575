/**
 * Today at a glance (UTC day of the slots, as `GET /api/v1/stats/today` counts): runs,
 * failures, average trigger delay, longest run, the five tasks that failed most, and per-hour
 * charts of runs, failures and fire lag (`GET /api/v1/stats/hourly`). Refreshed every 30 s.
 */
import { Link } from 'wouter';
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

function Figure({ name, label, value, text, tone }: { name: string; label: string; value: number | null; text: string; tone?: 'bad' | 'good' }) {
  return (
    <article className={`figure${tone === undefined ? '' : ` figure-${tone}`}`} data-stat={name} data-value={value === null ? '' : String(value)}>
      <small>{label}</small>
      <strong>{text}</strong>
    </article>
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
      <ErrorLine error={today.error ?? hourly.error} />
      {s === undefined ? (
        today.error === null && <Loading what="today's figures" />
      ) : (
        <>
          <div className="figures">
            <Figure name="total" label="Runs today" value={s.total} text={String(s.total)} />
            <Figure name="succeeded" label="Succeeded" value={s.succeeded} text={String(s.succeeded)} tone="good" />
            <Figure name="failed" label="Failed" value={s.failed} text={String(s.failed)} tone={s.failed > 0 ? 'bad' : undefined} />
            <Figure name="running" label="Running" value={s.running} text={String(s.running)} />
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

/**
 * Alerts (`GET /api/v1/alerts`): what was raised, newest first, of the token's teams, with how
 * far its webhook delivery got. Filters by kind, severity, delivery state, task and time range,
 * kept in the URL so a view can be shared.
 */
import { useState, type FormEvent } from 'react';
import { Link, useLocation, useSearch } from 'wouter';
import type { Page } from '../api';
import { ErrorLine } from '../components/ErrorLine';
import { Loading } from '../components/Loading';
import { isoToUtcInput, utcInputToIso } from '../ops/logic';
import { UtcLocal } from '../ops/TimeCell';
import type { Alert } from '../ops/types';
import { useApi } from '../use-api';
import { Pager, usePager } from '../components/Pager';
import '../styles/ops.css';

const KINDS = ['FINAL_FAILURE', 'LOST_WORKER', 'NO_WORKER', 'CLOCK_SKEW', 'BACKLOG', 'DID_NOT_FIRE', 'LONG_RUNNING', 'UPSTREAM_MISSING', 'SLA_MISSED', 'TASK_PAUSED'];
const KEYS = ['kind', 'severity', 'delivery', 'task', 'from', 'to'] as const;
type Filters = Record<(typeof KEYS)[number], string>;

const DELIVERY_LABEL: Record<Alert['delivery'], string> = { pending: 'pending', sent: 'sent', failed: 'failed', not_configured: 'not configured' };

/** One route's line: where it went (scheme://host, never the webhook's token) and how far it got. */
function routeLine(route: Alert['routes'][number]): string {
  const attempts = route.attempts === 1 ? '1 attempt' : `${route.attempts} attempts`;
  const state = route.state === 'gave_up' ? 'gave up' : route.state;
  return `${route.route} ${route.target} (${route.format}): ${state}, ${attempts}${route.lastError === null ? '' : ` — ${route.lastError}`}`;
}

function DeliveryCell({ alert }: { alert: Alert }) {
  const attempts = alert.attempts === 1 ? '1 attempt' : `${alert.attempts} attempts`;
  return (
    <>
      <span className={`pill delivery-${alert.delivery}`} data-delivery={alert.delivery}>
        {DELIVERY_LABEL[alert.delivery]}
      </span>
      {alert.delivery === 'not_configured' && <small className="muted block">no AX_ALERT_WEBHOOK_URL and no team route: only logged</small>}
      {alert.attempts > 0 && <small className="muted block">{attempts}</small>}
      {alert.routes.length > 1 || alert.routes.some((r) => r.state !== 'sent')
        ? alert.routes.map((r) => (
            <small key={`${r.route}${r.target}${r.format}`} className="muted block" data-route-state={r.state}>
              {routeLine(r)}
            </small>
          ))
        : null}
      {alert.deliveredAt !== null && (
        <small className="muted block">
          <UtcLocal iso={alert.deliveredAt} />
        </small>
      )}
    </>
  );
}

export function AlertsPage() {
  const search = new URLSearchParams(useSearch());
  const [, navigate] = useLocation();
  const filters = Object.fromEntries(KEYS.map((k) => [k, search.get(k) ?? ''])) as Filters;
  const [form, setForm] = useState<Filters>({ ...filters, from: isoToUtcInput(filters.from), to: isoToUtcInput(filters.to) });
  const pager = usePager();
  const list = useApi<Page<Alert>>('/api/v1/alerts', { ...filters, limit: 50, cursor: pager.cursor }, { refreshMs: 10_000 });

  const apply = (e: FormEvent) => {
    e.preventDefault();
    pager.reset();
    const values: Filters = { ...form, task: form.task.trim(), from: utcInputToIso(form.from), to: utcInputToIso(form.to) };
    const params = new URLSearchParams(KEYS.filter((k) => values[k] !== '').map((k) => [k, values[k]]));
    navigate(params.size === 0 ? '/alerts' : `/alerts?${params.toString()}`);
  };
  const set = (patch: Partial<Filters>) => setForm((f) => ({ ...f, ...patch }));

  return (
    <>
      <hgroup>
        <h2>Alerts</h2>
        <p>Raised for the teams of this token, newest first; delivery covers the platform webhook and the team&apos;s own routes (each retried with backoff, given up after 10 attempts).</p>
      </hgroup>
      <form className="filters" onSubmit={apply} data-testid="alert-filters">
        <select name="kind" aria-label="Kind" value={form.kind} onChange={(e) => set({ kind: e.target.value })}>
          <option value="">any kind</option>
          {(KINDS.includes(form.kind) || form.kind === '' ? KINDS : [...KINDS, form.kind]).map((k) => (
            <option key={k} value={k}>
              {k}
            </option>
          ))}
        </select>
        <select name="severity" aria-label="Severity" value={form.severity} onChange={(e) => set({ severity: e.target.value })}>
          <option value="">any severity</option>
          <option value="critical">critical</option>
          <option value="warning">warning</option>
        </select>
        <select name="delivery" aria-label="Delivery" value={form.delivery} onChange={(e) => set({ delivery: e.target.value })}>
          <option value="">any delivery</option>
          <option value="pending">pending</option>
          <option value="sent">sent</option>
          <option value="failed">failed</option>
          <option value="not_configured">not configured</option>
        </select>
        <input name="task" placeholder="task name" aria-label="Task" value={form.task} onChange={(e) => set({ task: e.target.value })} />
        <label className="inline-field">
          <small>from (UTC)</small>
          <input name="from" type="datetime-local" aria-label="Raised from (UTC)" value={form.from} onChange={(e) => set({ from: e.target.value })} />
        </label>
        <label className="inline-field">
          <small>to (UTC)</small>
          <input name="to" type="datetime-local" aria-label="Raised before (UTC)" value={form.to} onChange={(e) => set({ to: e.target.value })} />
        </label>
        <input type="submit" value="Filter" />
      </form>
      <ErrorLine error={list.error} />
      {list.data === undefined ? (
        list.error === null && <Loading what="alerts" />
      ) : list.data.items.length === 0 ? (
        <p data-testid="alerts-empty">No alerts{search.size > 0 ? ' match these filters' : ''}.</p>
      ) : (
        <div className="table-scroll">
          <table className="striped" data-testid="alert-table">
            <thead>
              <tr>
                <th>raised at</th>
                <th>kind</th>
                <th>severity</th>
                <th>task</th>
                <th className="hide-sm">team</th>
                <th>message</th>
                <th>delivery</th>
              </tr>
            </thead>
            <tbody>
              {list.data.items.map((a) => (
                <tr key={a.id} data-alert={a.id} data-kind={a.kind}>
                  <td>
                    <UtcLocal iso={a.at} />
                  </td>
                  <td>
                    <code>{a.kind}</code>
                    {a.reason !== undefined && <small className="muted block">{a.reason}</small>}
                  </td>
                  <td>
                    <span className={`severity severity-${a.severity}`} data-severity={a.severity}>
                      {a.severity}
                    </span>
                  </td>
                  <td>
                    {a.taskName === undefined ? '—' : <Link href={`/tasks/${encodeURIComponent(a.taskName)}`}>{a.taskName}</Link>}
                    {a.instanceId !== undefined && (
                      <small className="block">
                        <Link href={`/instances/${a.instanceId}`}>#{a.instanceId}</Link>
                      </small>
                    )}
                    {a.workerId !== undefined && <small className="muted block">worker {a.workerId}</small>}
                  </td>
                  <td className="hide-sm">{a.team ?? '—'}</td>
                  <td className="message">{a.message}</td>
                  <td>
                    <DeliveryCell alert={a} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager pager={pager} nextCursor={list.data?.nextCursor} />
    </>
  );
}

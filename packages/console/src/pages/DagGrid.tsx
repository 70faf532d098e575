/**
 * The DAG grid (`GET /api/v1/dag/grid`): tasks down (parents first), the last N business dates
 * across, each cell the state of the task's latest slot that day with its run's duration; a
 * click opens the instance. A root task narrows it to its downstream, as in the graph view.
 */
import { useState, type FormEvent } from 'react';
import { Link, useLocation, useSearch } from 'wouter';
import { ErrorLine } from '../components/ErrorLine';
import { Loading } from '../components/Loading';
import { StateBadge } from '../components/StateBadge';
import { duration } from '../format';
import { gridRows } from '../ops/logic';
import type { DagGrid, GridCell } from '../ops/types';
import { useApi } from '../use-api';
import '../styles/ops.css';

const DAY_CHOICES = [7, 14, 30, 60, 90];
const LEGEND = ['WAITING', 'PENDING', 'DISPATCHED', 'RUNNING', 'RETRY_WAIT', 'SUCCESS', 'FAILED', 'CANCELED'];

function Cell({ cell, task, bizDate }: { cell: GridCell | null; task: string; bizDate: string }) {
  const [, navigate] = useLocation();
  if (cell === null) {
    return (
      <td className="grid-cell state-NONE" data-task={task} data-bizdate={bizDate} data-state="NONE" title={`${task} · ${bizDate}: no instance`}>
        <span className="muted">·</span>
      </td>
    );
  }
  const text = cell.durationMs === null ? '—' : duration(cell.durationMs);
  const title = `${task} · ${bizDate}: ${cell.state} (#${cell.instanceId})${cell.durationMs === null ? '' : `, ran ${text}`}${cell.slots > 1 ? `, latest of ${cell.slots} slots` : ''}`;
  return (
    <td
      className={`grid-cell state-${cell.state}`}
      data-task={task}
      data-bizdate={bizDate}
      data-state={cell.state}
      data-instance={cell.instanceId}
      data-duration-ms={cell.durationMs ?? ''}
      title={title}
      tabIndex={0}
      role="link"
      aria-label={title}
      onClick={() => navigate(`/instances/${cell.instanceId}`)}
      onKeyDown={(e) => {
        if (e.key === 'Enter') navigate(`/instances/${cell.instanceId}`);
      }}
    >
      <span className="grid-duration" data-testid="grid-duration">
        {text}
      </span>
      {cell.slots > 1 && <small className="grid-slots">×{cell.slots}</small>}
    </td>
  );
}

export function DagGridPage() {
  const [, navigate] = useLocation();
  const search = new URLSearchParams(useSearch());
  const root = search.get('root') ?? '';
  const daysText = search.get('days') ?? '14';
  const to = search.get('to') ?? '';
  const [form, setForm] = useState({ root, days: daysText, to });
  const grid = useApi<DagGrid>('/api/v1/dag/grid', { root, days: daysText, to }, { refreshMs: 15_000 });

  const apply = (e: FormEvent) => {
    e.preventDefault();
    const params = new URLSearchParams();
    if (form.root.trim() !== '') params.set('root', form.root.trim());
    if (form.days !== '14') params.set('days', form.days);
    if (form.to !== '') params.set('to', form.to);
    navigate(params.size === 0 ? '/dag/grid' : `/dag/grid?${params.toString()}`);
  };
  const graphHref = root === '' ? '/dag' : `/dag?root=${encodeURIComponent(root)}`;

  return (
    <>
      <hgroup>
        <h2>DAG grid</h2>
        <p>
          {root === '' ? 'Every task with a dependency' : `${root} and its downstream`} · the last {grid.data?.days ?? daysText} business dates ·{' '}
          <Link href={graphHref} data-testid="to-graph">
            graph view
          </Link>
        </p>
      </hgroup>
      <form className="filters" onSubmit={apply}>
        <input name="root" placeholder="root task (all when empty)" aria-label="Root task" value={form.root} onChange={(e) => setForm({ ...form, root: e.target.value })} />
        <select name="days" aria-label="Business dates" value={form.days} onChange={(e) => setForm({ ...form, days: e.target.value })}>
          {(DAY_CHOICES.map(String).includes(form.days) ? DAY_CHOICES.map(String) : [...DAY_CHOICES.map(String), form.days]).map((d) => (
            <option key={d} value={d}>
              {d} dates
            </option>
          ))}
        </select>
        <label className="inline-field">
          <small>up to</small>
          <input name="to" type="date" aria-label="Newest business date (latest when empty)" value={form.to} onChange={(e) => setForm({ ...form, to: e.target.value })} />
        </label>
        <input type="submit" value="Show" />
      </form>
      <ErrorLine error={grid.error} />
      {grid.data === undefined ? (
        grid.error === null && <Loading what="the grid" />
      ) : grid.data.tasks.length === 0 ? (
        <p>
          No dependencies {root === '' ? 'between tasks yet' : `from ${root}`}. <Link href="/tasks">Tasks →</Link>
        </p>
      ) : grid.data.bizDates.length === 0 ? (
        <p>No instances of these tasks yet.</p>
      ) : (
        <>
          <div className="table-scroll">
            <table className="dag-grid" data-testid="dag-grid" data-days={grid.data.days}>
              <thead>
                <tr>
                  <th scope="col">task</th>
                  {grid.data.bizDates.map((d) => (
                    <th key={d} scope="col" className="grid-date" data-bizdate={d}>
                      {d.slice(5)}
                      <small className="muted block">{d.slice(0, 4)}</small>
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {gridRows(grid.data).map((row) => (
                  <tr key={row.task} data-task={row.task}>
                    <th scope="row" className="grid-task">
                      <Link href={`/tasks/${encodeURIComponent(row.task)}`}>{row.task}</Link>
                    </th>
                    {row.cells.map((c, n) => (
                      <Cell key={grid.data?.bizDates[n]} cell={c} task={row.task} bizDate={grid.data?.bizDates[n] ?? ''} />
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <p className="legend">
            {LEGEND.map((s) => (
              <StateBadge key={s} state={s} />
            ))}{' '}
            <small className="muted">cell: the latest slot of the day, its run time; ×n: n slots that day</small>
          </p>
        </>
      )}
    </>
  );
}

/** Instances, newest first, filtered by team, task, state and business date (kept in the URL so a view can be shared). */
import { useState, type FormEvent } from 'react';
import { useLocation, useSearch } from 'wouter';
import type { Page } from '../api';
import { ErrorLine } from '../components/ErrorLine';
import { InstanceTable } from '../components/InstanceTable';
import { Loading } from '../components/Loading';
import { TeamSelect } from '../components/TeamSelect';
import { useApi } from '../use-api';
import type { Instance } from '../types';

const STATES = ['', 'WAITING', 'PENDING', 'DISPATCHED', 'RUNNING', 'RETRY_WAIT', 'SUCCESS', 'FAILED', 'CANCELED', 'FAILED,CANCELED'];

export function InstancesPage() {
  const search = new URLSearchParams(useSearch());
  const [, navigate] = useLocation();
  const filters = { team: search.get('team') ?? '', task: search.get('task') ?? '', state: search.get('state') ?? '', bizDate: search.get('bizDate') ?? '' };
  const [form, setForm] = useState(filters);
  const [cursors, setCursors] = useState<string[]>([]);
  const list = useApi<Page<Instance>>('/api/v1/instances', { ...filters, limit: 50, cursor: cursors[cursors.length - 1] }, { refreshMs: 5_000 });

  const apply = (e: FormEvent) => {
    e.preventDefault();
    setCursors([]);
    const params = new URLSearchParams(Object.entries(form).filter(([, v]) => v.trim() !== '').map(([k, v]) => [k, v.trim()]));
    navigate(params.size === 0 ? '/instances' : `/instances?${params.toString()}`);
  };

  return (
    <>
      <h2>Instances</h2>
      <form className="filters" onSubmit={apply}>
        <TeamSelect value={form.team} onChange={(team) => setForm({ ...form, team })} />
        <input name="task" placeholder="task name" aria-label="Task" value={form.task} onChange={(e) => setForm({ ...form, task: e.target.value })} />
        <select name="state" aria-label="State" value={form.state} onChange={(e) => setForm({ ...form, state: e.target.value })}>
          {STATES.map((s) => (
            <option key={s} value={s}>
              {s === '' ? 'any state' : s}
            </option>
          ))}
        </select>
        <input name="bizDate" type="date" aria-label="Business date" value={form.bizDate} onChange={(e) => setForm({ ...form, bizDate: e.target.value })} />
        <input type="submit" value="Filter" />
      </form>
      <ErrorLine error={list.error} />
      {list.data === undefined ? list.error === null && <Loading what="instances" /> : <InstanceTable instances={list.data.items} />}
      <div className="pager">
        {cursors.length > 0 && (
          <button type="button" className="secondary outline small" onClick={() => setCursors((c) => c.slice(0, -1))}>
            ← Newer
          </button>
        )}
        {list.data?.nextCursor != null && (
          <button type="button" className="secondary outline small" onClick={() => setCursors((c) => [...c, list.data?.nextCursor ?? ''])}>
            Older →
          </button>
        )}
      </div>
    </>
  );
}

/**
 * Instances, newest first, filtered by team, task, state, business date, worker, trigger and
 * slot time range — all kept in the URL so a view can be shared. Operators select rows for a
 * bulk rerun (dry run first) or a bulk cancel (confirmed); viewers get no checkboxes.
 */
import { useMemo, useState, type FormEvent } from 'react';
import { useLocation, useSearch } from 'wouter';
import type { Page } from '../api';
import { ErrorLine } from '../components/ErrorLine';
import { InstanceTable, type InstanceSelection } from '../components/InstanceTable';
import { Loading } from '../components/Loading';
import { TeamSelect } from '../components/TeamSelect';
import { BulkDialog, type BulkKind } from '../ops/BulkActions';
import { filtersFromSearch, filtersToSearch, isoToUtcInput, TRIGGERS, utcInputToIso, type InstanceFilters } from '../ops/logic';
import { can } from '../roles';
import { useSession } from '../session';
import { useApi } from '../use-api';
import type { Instance, Worker } from '../types';
import { Pager, usePager } from '../components/Pager';
import '../styles/ops.css';

const STATES = ['', 'WAITING', 'PENDING', 'DISPATCHED', 'RUNNING', 'RETRY_WAIT', 'SUCCESS', 'FAILED', 'CANCELED', 'FAILED,CANCELED'];

export function InstancesPage() {
  const { principal } = useSession();
  const operator = can(principal.role, 'operator');
  const searchText = useSearch();
  const [, navigate] = useLocation();
  const filters = useMemo(() => filtersFromSearch(searchText), [searchText]);
  const [form, setForm] = useState<InstanceFilters>({ ...filters, from: isoToUtcInput(filters.from), to: isoToUtcInput(filters.to) });
  const pager = usePager();
  const [chosen, setChosen] = useState<Map<string, Instance>>(new Map());
  const [bulk, setBulk] = useState<BulkKind | null>(null);
  const list = useApi<Page<Instance>>('/api/v1/instances', { ...filters, limit: 50, cursor: pager.cursor }, { refreshMs: bulk === null ? 5_000 : 0 });
  const workers = useApi<Page<Worker>>('/api/v1/workers');

  // The chosen rows as last listed (their state moves on while the page polls).
  const selected = useMemo(() => {
    const fresh = new Map((list.data?.items ?? []).map((i) => [i.id, i]));
    return [...chosen.values()].map((i) => fresh.get(i.id) ?? i);
  }, [chosen, list.data]);

  const apply = (e: FormEvent) => {
    e.preventDefault();
    pager.reset();
    setChosen(new Map());
    const query = filtersToSearch({ ...form, from: utcInputToIso(form.from), to: utcInputToIso(form.to) });
    navigate(query === '' ? '/instances' : `/instances?${query}`);
  };
  const set = (patch: Partial<InstanceFilters>) => setForm((f) => ({ ...f, ...patch }));

  const selection: InstanceSelection | undefined = operator
    ? {
        selected: new Set(chosen.keys()),
        onToggle: (id) =>
          setChosen((c) => {
            const next = new Map(c);
            const row = list.data?.items.find((i) => i.id === id);
            if (next.has(id)) next.delete(id);
            else if (row !== undefined) next.set(id, row);
            return next;
          }),
        onToggleAll: (ids) =>
          setChosen((c) => {
            const next = new Map(c);
            const rows = (list.data?.items ?? []).filter((i) => ids.includes(i.id));
            if (rows.every((i) => next.has(i.id))) rows.forEach((i) => next.delete(i.id));
            else rows.forEach((i) => next.set(i.id, i));
            return next;
          }),
      }
    : undefined;

  return (
    <>
      <h2>Instances</h2>
      <form className="filters" onSubmit={apply} data-testid="instance-filters">
        <TeamSelect value={form.team} onChange={(team) => set({ team })} />
        <input name="task" placeholder="task name" aria-label="Task" value={form.task} onChange={(e) => set({ task: e.target.value })} />
        <select name="state" aria-label="State" value={form.state} onChange={(e) => set({ state: e.target.value })}>
          {STATES.map((s) => (
            <option key={s} value={s}>
              {s === '' ? 'any state' : s}
            </option>
          ))}
        </select>
        <select name="trigger" aria-label="Trigger" value={form.trigger} onChange={(e) => set({ trigger: e.target.value })}>
          <option value="">any trigger</option>
          {TRIGGERS.map((t) => (
            <option key={t} value={t}>
              {t === 'rerun' ? 'rerun / backfill' : t}
            </option>
          ))}
        </select>
        <input name="worker" placeholder="worker id" aria-label="Worker" list="ops-workers" value={form.worker} onChange={(e) => set({ worker: e.target.value })} />
        <datalist id="ops-workers">
          {(workers.data?.items ?? []).map((w) => (
            <option key={w.id} value={w.id}>
              {w.host}
            </option>
          ))}
        </datalist>
        <input name="bizDate" type="date" aria-label="Business date" value={form.bizDate} onChange={(e) => set({ bizDate: e.target.value })} />
        <label className="inline-field">
          <small>slot from (UTC)</small>
          <input name="from" type="datetime-local" aria-label="Slot from (UTC)" value={form.from} onChange={(e) => set({ from: e.target.value })} />
        </label>
        <label className="inline-field">
          <small>slot before (UTC)</small>
          <input name="to" type="datetime-local" aria-label="Slot before (UTC)" value={form.to} onChange={(e) => set({ to: e.target.value })} />
        </label>
        <input type="submit" value="Filter" />
      </form>
      {operator && (
        <div className="bulk-bar" data-testid="bulk-bar">
          <span>
            <strong data-testid="selected-count">{selected.length}</strong> selected
          </span>
          <button type="button" className="secondary small" data-testid="bulk-rerun" disabled={selected.length === 0} onClick={() => setBulk('rerun')}>
            Rerun selected…
          </button>
          <button type="button" className="secondary small" data-testid="bulk-cancel" disabled={selected.length === 0} onClick={() => setBulk('cancel')}>
            Cancel selected…
          </button>
          {selected.length > 0 && (
            <button type="button" className="secondary outline small" onClick={() => setChosen(new Map())}>
              Clear
            </button>
          )}
        </div>
      )}
      <ErrorLine error={list.error} />
      {list.data === undefined ? list.error === null && <Loading what="instances" /> : <InstanceTable instances={list.data.items} {...(selection === undefined ? {} : { selection })} />}
      <Pager pager={pager} nextCursor={list.data?.nextCursor} />
      {bulk !== null && (
        <BulkDialog
          kind={bulk}
          selected={selected}
          onClose={() => {
            setBulk(null);
            list.reload();
          }}
          onDone={() => setChosen(new Map())}
        />
      )}
    </>
  );
}

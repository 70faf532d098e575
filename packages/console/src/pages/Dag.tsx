/**
 * The DAG drawn (dagre layout, SVG), from a root task or all of it, each task coloured by the
 * state of its instance on the latest business date (or a chosen one). A node opens its
 * instance, or its task when it has none that day.
 */
import { useEffect, useMemo, useState, type FormEvent } from 'react';
import { Link, useLocation, useSearch } from 'wouter';
import { errorText } from '../api';
import { ErrorLine } from '../components/ErrorLine';
import { Loading } from '../components/Loading';
import { StateBadge } from '../components/StateBadge';
import { layoutDag, type Layout } from '../dag-layout';
import { instancesOn, latestBizDate } from '../dag-states';
import { useSession } from '../session';
import { useApi } from '../use-api';
import type { Dag, Instance } from '../types';

/** Colouring asks two small requests per task every 10 s: beyond this many, choose a root first. */
const MAX_COLOURED_NODES = 150;

const LEGEND = ['WAITING', 'PENDING', 'DISPATCHED', 'RUNNING', 'RETRY_WAIT', 'SUCCESS', 'FAILED', 'CANCELED', 'NONE'];

function pathOf(points: ReadonlyArray<{ x: number; y: number }>): string {
  return points.map((p, n) => `${n === 0 ? 'M' : 'L'}${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(' ');
}

function Graph({ layout, states }: { layout: Layout; states: Map<string, Instance> }) {
  const [, navigate] = useLocation();
  return (
    <div className="dag-scroll">
      <svg
        className="dag"
        data-testid="dag"
        viewBox={`0 0 ${layout.width} ${layout.height}`}
        width={layout.width}
        height={layout.height}
        role="img"
        aria-label="task dependency graph"
      >
        <defs>
          <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
            <path d="M 0 0 L 10 5 L 0 10 z" className="dag-arrow" />
          </marker>
        </defs>
        {layout.edges.map((e) => (
          <path key={`${e.parent}->${e.child}`} d={pathOf(e.points)} className={`dag-edge${e.rule === 'ALL_DONE' ? ' dag-edge-all-done' : ''}`} markerEnd="url(#arrow)">
            <title>
              {e.parent} → {e.child} ({e.rule})
            </title>
          </path>
        ))}
        {layout.nodes.map((n) => {
          const instance = states.get(n.name);
          const state = instance?.state ?? 'NONE';
          const open = () => navigate(instance === undefined ? `/tasks/${encodeURIComponent(n.name)}` : `/instances/${instance.id}`);
          return (
            <g
              key={n.name}
              className={`dag-node state-${state}`}
              data-task={n.name}
              data-state={state}
              transform={`translate(${n.x - n.width / 2},${n.y - n.height / 2})`}
              tabIndex={0}
              role="link"
              onClick={open}
              onKeyDown={(e) => {
                if (e.key === 'Enter') open();
              }}
            >
              <title>{`${n.name}: ${instance === undefined ? 'no instance' : `${state} (#${instance.id})`}`}</title>
              <rect width={n.width} height={n.height} rx={6} />
              <text x={n.width / 2} y={n.height / 2} dominantBaseline="central" textAnchor="middle">
                {n.name}
              </text>
            </g>
          );
        })}
      </svg>
    </div>
  );
}

export function DagPage() {
  const { client } = useSession();
  const [, navigate] = useLocation();
  const search = new URLSearchParams(useSearch());
  const root = search.get('root') ?? '';
  const chosenDate = search.get('bizDate') ?? '';
  const [form, setForm] = useState({ root, bizDate: chosenDate });
  const dag = useApi<Dag>('/api/v1/dag', { root });
  const [states, setStates] = useState<{ bizDate: string | null; byTask: Map<string, Instance> } | null>(null);
  const [error, setError] = useState<string | null>(null);

  // Without a root the API lists every task: draw the ones that have an edge.
  const shown = useMemo<Dag | null>(() => {
    if (dag.data === undefined) return null;
    if (root !== '') return dag.data;
    const linked = new Set(dag.data.edges.flatMap((e) => [e.parent, e.child]));
    return { nodes: dag.data.nodes.filter((n) => linked.has(n)), edges: dag.data.edges };
  }, [dag.data, root]);
  const layout = useMemo(() => (shown === null || shown.nodes.length === 0 ? null : layoutDag(shown)), [shown]);

  const tooMany = shown !== null && shown.nodes.length > MAX_COLOURED_NODES;
  useEffect(() => {
    if (shown === null || tooMany) return;
    let live = true;
    const load = async () => {
      const date = chosenDate !== '' ? chosenDate : await latestBizDate(client, shown.nodes);
      const byTask = date === null ? new Map<string, Instance>() : await instancesOn(client, shown.nodes, date);
      if (live) {
        setStates({ bizDate: date, byTask });
        setError(null);
      }
    };
    load().catch((err: unknown) => {
      if (live) setError(errorText(err));
    });
    const timer = setInterval(() => void load().catch(() => undefined), 10_000);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [client, shown, chosenDate, tooMany]);

  const apply = (e: FormEvent) => {
    e.preventDefault();
    const params = new URLSearchParams(Object.entries(form).filter(([, v]) => v.trim() !== '').map(([k, v]) => [k, v.trim()]));
    navigate(params.size === 0 ? '/dag' : `/dag?${params.toString()}`);
  };

  return (
    <>
      <hgroup>
        <h2>DAG</h2>
        <p>
          {root === '' ? 'All dependencies' : `Downstream of ${root}`} · states on business date{' '}
          <strong data-testid="dag-bizdate">{states?.bizDate ?? '—'}</strong>
          {chosenDate === '' && ' (latest)'} ·{' '}
          <Link href={root === '' ? '/dag/grid' : `/dag/grid?root=${encodeURIComponent(root)}`} data-testid="to-grid">
            grid of the last 14 dates
          </Link>
        </p>
      </hgroup>
      <form className="filters" onSubmit={apply}>
        <input name="root" placeholder="root task (all when empty)" aria-label="Root task" value={form.root} onChange={(e) => setForm({ ...form, root: e.target.value })} />
        <input name="bizDate" type="date" aria-label="Business date (latest when empty)" value={form.bizDate} onChange={(e) => setForm({ ...form, bizDate: e.target.value })} />
        <input type="submit" value="Show" />
      </form>
      <ErrorLine error={dag.error ?? error} />
      {dag.data === undefined ? (
        dag.error === null && <Loading what="the DAG" />
      ) : layout === null ? (
        <p>
          No dependencies {root === '' ? 'between tasks yet' : `from ${root}`}. Edges are created with <code>POST /api/v1/edges</code>. <Link href="/tasks">Tasks →</Link>
        </p>
      ) : (
        <>
          {tooMany && <p className="notice">{shown?.nodes.length} tasks: too many to colour by state. Choose a root task to see their states.</p>}
          <Graph layout={layout} states={states?.byTask ?? new Map()} />
          <p className="legend">
            {LEGEND.map((s) => (
              <StateBadge key={s} state={s} />
            ))}{' '}
            <small className="muted">dashed edge = ALL_DONE</small>
          </p>
        </>
      )}
    </>
  );
}

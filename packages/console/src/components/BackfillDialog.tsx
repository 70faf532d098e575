/**
 * The backfill dialog (ADMIN-API.md "Reruns", mode `backfill`): a range of business dates,
 * a concurrency and a reason; a dry run first, always — "Start backfill" is offered only for the
 * preview of exactly the choices on screen, which lists the slots (existing instances by id and
 * state, new ones by expected time). Started, it goes to the batch's page.
 * Rendered from a task page with its task; the Reruns page passes `chooseTask` for a picker.
 */
import { useState, type FormEvent } from 'react';
import { Link, useLocation } from 'wouter';
import { errorText, type Page } from '../api';
import { utc } from '../format';
import { backfillBody, backfillProblem, daysBefore, type BackfillChoices } from '../reruns/progress';
import type { RerunStarted } from '../reruns/types';
import { useSession } from '../session';
import type { RerunPlan, RerunPlanItem, Task } from '../types';
import { useApi } from '../use-api';
import { ErrorLine } from './ErrorLine';
import { StateBadge } from './StateBadge';
import '../styles/reruns.css';

interface Preview {
  for: string;
  items: RerunPlanItem[];
  forbiddenTeams: string[];
}

function yesterday(): string {
  return daysBefore(new Date().toISOString().slice(0, 10), 1);
}

export function BackfillDialog(props: { task: string; onClose: () => void; chooseTask?: boolean }) {
  const { client } = useSession();
  const [, navigate] = useLocation();
  const [task, setTask] = useState(props.task);
  const to = yesterday();
  const [choices, setChoices] = useState<BackfillChoices>({ from: daysBefore(to, 6), to, concurrency: '1', reason: '' });
  const [preview, setPreview] = useState<Preview | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const tasks = useApi<Page<Task>>(props.chooseTask === true ? '/api/v1/tasks' : null, { limit: 500 });
  // Its block strategy: anything but `parallel` keeps its runs from overlapping, whatever the concurrency.
  const chosen = useApi<Task>(task === '' ? null : `/api/v1/tasks/${encodeURIComponent(task)}`);
  const block = chosen.data?.name === task ? chosen.data.block : undefined;
  const key = JSON.stringify({ task, ...choices });
  const previewed = preview !== null && preview.for === key;
  const schedulable = (tasks.data?.items ?? []).filter((t) => t.schedule.type === 'cron' || t.schedule.type === 'fixed_rate');

  const update = (patch: Partial<BackfillChoices>) => {
    setChoices((c) => ({ ...c, ...patch }));
    setError(null);
  };

  const runPreview = async (e: FormEvent) => {
    e.preventDefault();
    const problem = task === '' ? 'Choose a task to backfill.' : backfillProblem(choices);
    if (problem !== null) {
      setError(problem);
      return;
    }
    setBusy(true);
    try {
      const answer = await client.post<RerunPlan>('/api/v1/reruns', backfillBody(task, choices, true));
      setPreview({ for: key, items: answer.instances, forbiddenTeams: answer.forbiddenTeams });
      setError(null);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  const start = async () => {
    setBusy(true);
    try {
      const answer = await client.post<RerunStarted>('/api/v1/reruns', backfillBody(task, choices, false));
      props.onClose();
      navigate(answer.batchId === null ? '/reruns' : `/reruns/${encodeURIComponent(answer.batchId)}`);
    } catch (err) {
      setError(errorText(err));
      setBusy(false);
    }
  };

  const existing = preview?.items.filter((i) => i.action === 'rerun').length ?? 0;
  return (
    <dialog
      open
      aria-labelledby="backfill-title"
      data-testid="backfill-dialog"
      onKeyDown={(e) => {
        if (e.key === 'Escape') props.onClose();
      }}
    >
      <article>
        <header>
          <button type="button" aria-label="Close" rel="prev" onClick={props.onClose} />
          <h3 id="backfill-title">Backfill{props.chooseTask === true ? '' : ` ${props.task}`}</h3>
        </header>
        <form onSubmit={(e) => void runPreview(e)}>
          {props.chooseTask === true && (
            <label>
              Task (scheduled ones)
              <select name="task" required value={task} onChange={(e) => { setTask(e.target.value); setError(null); }}>
                <option value="">— choose —</option>
                {schedulable.map((t) => (
                  <option key={t.name} value={t.name}>
                    {t.name}
                  </option>
                ))}
              </select>
              <ErrorLine error={tasks.error} />
            </label>
          )}
          <p>
            <small>One slot per schedule fire whose business date lies in the range: created where missing, re-run where final, oldest first.</small>
          </p>
          <div className="backfill-fields">
            <label>
              From (biz date)
              <input type="date" name="from" required value={choices.from} onChange={(e) => update({ from: e.target.value })} />
            </label>
            <label>
              To (biz date)
              <input type="date" name="to" required value={choices.to} onChange={(e) => update({ to: e.target.value })} />
            </label>
            <label>
              Concurrency
              <input type="number" name="concurrency" required min={1} max={1000} step={1} value={choices.concurrency} onChange={(e) => update({ concurrency: e.target.value })} />
            </label>
          </div>
          {block !== undefined && block !== 'parallel' && Number(choices.concurrency) > 1 && (
            <p data-testid="block-hint">
              <small>
                {task} blocks as <code>{typeof block === 'string' ? block : `queue ${block.queue}`}</code>: its runs never overlap, so at most one of them runs at a time whatever the concurrency.
              </small>
            </p>
          )}
          <label>
            Reason (audited)
            <input name="reason" required maxLength={2048} value={choices.reason} placeholder="e.g. source data reloaded" onChange={(e) => update({ reason: e.target.value })} />
          </label>
          <ErrorLine error={error} />
          <button type="submit" className="secondary" disabled={busy} aria-busy={busy && !previewed}>
            Preview (dry run)
          </button>
        </form>
        {previewed && (
          <section data-testid="backfill-preview" data-slots={preview.items.length}>
            <h4>
              {preview.items.length === 0
                ? 'No slot in this range.'
                : `${preview.items.length} slot${preview.items.length === 1 ? '' : 's'}: ${preview.items.length - existing} new, ${existing} re-run`}
            </h4>
            {preview.forbiddenTeams.length > 0 && <ErrorLine error={`Refused: instances of teams this token does not cover (${preview.forbiddenTeams.join(', ')}).`} />}
            {preview.items.length > 0 && (
              <div className="table-scroll">
                <table className="striped">
                  <thead>
                    <tr>
                      <th>slot (UTC)</th>
                      <th>biz date</th>
                      <th>instance</th>
                      <th>now → then</th>
                    </tr>
                  </thead>
                  <tbody>
                    {preview.items.map((item) => (
                      <tr key={item.expectedTime} data-slot={item.bizDate} data-action={item.action}>
                        <td>{utc(item.expectedTime)}</td>
                        <td>{item.bizDate}</td>
                        <td>{item.action === 'rerun' && item.id !== undefined ? <Link href={`/instances/${item.id}`}>#{item.id}</Link> : 'new'}</td>
                        <td>
                          {item.from !== undefined && <StateBadge state={item.from} />} → <StateBadge state={item.state} />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </section>
        )}
        <footer>
          <button type="button" className="secondary outline" onClick={props.onClose}>
            Close
          </button>
          <button
            type="button"
            data-action="start-backfill"
            disabled={!previewed || busy || preview.items.length === 0 || preview.forbiddenTeams.length > 0}
            aria-busy={busy && previewed}
            onClick={() => void start()}
          >
            Start backfill{previewed && preview.items.length > 0 ? ` (${preview.items.length})` : ''}
          </button>
        </footer>
      </article>
    </dialog>
  );
}

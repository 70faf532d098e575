/**
 * The rerun dialog (ADMIN-API.md "Reruns"): a dry run first, always — the "Rerun" button is
 * offered only for the preview of exactly the choices on screen, so what runs is what was shown.
 * `forceDownstream` is offered to admins only (the API refuses it to others anyway).
 */
import { useState, type FormEvent } from 'react';
import { errorText } from '../api';
import { utc } from '../format';
import { can } from '../roles';
import { useSession } from '../session';
import type { RerunPlan, RerunPlanItem, RerunStarted } from '../types';
import { ErrorLine } from './ErrorLine';
import { StateBadge } from './StateBadge';

/** What to re-run: one instance, or a DAG / the failed instances of a business date. */
export type RerunTarget =
  | { mode: 'instance'; instanceId: string; taskName: string; bizDate: string }
  | { mode: 'dag'; root: string; bizDate: string };

type Mode = 'instance' | 'dag' | 'failed';

/** The console page of a rerun's batch: its progress by state, its instances, cancel. */
export function batchHref(batchId: string): string {
  return `/reruns/${encodeURIComponent(batchId)}`;
}

interface Choices {
  mode: Mode;
  reason: string;
  forceDownstream: boolean;
  bizDate: string;
}

function bodyOf(target: RerunTarget, c: Choices, dryRun: boolean): Record<string, unknown> {
  const common = { reason: c.reason.trim(), forceDownstream: c.forceDownstream, dryRun };
  const root = target.mode === 'instance' ? target.taskName : target.root;
  switch (c.mode) {
    case 'instance':
      return { mode: 'instance', instanceId: target.mode === 'instance' ? target.instanceId : '', ...common };
    case 'dag':
      return { mode: 'dag', root, bizDate: c.bizDate, ...common };
    case 'failed':
      return { mode: 'failed', root, bizDate: c.bizDate, ...common };
  }
}

/**
 * `onDone` gets the re-run instances and the batch id of the rerun (its page: `/reruns/<batchId>`,
 * see {@link batchHref}), for the caller's notice.
 */
export function RerunDialog({ target, onClose, onDone }: { target: RerunTarget; onClose: () => void; onDone: (ids: string[], batchId: string | null) => void }) {
  const { client, principal } = useSession();
  const [choices, setChoices] = useState<Choices>({ mode: target.mode, reason: '', forceDownstream: false, bizDate: target.bizDate });
  const [preview, setPreview] = useState<{ for: string; items: RerunPlanItem[] } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const key = JSON.stringify(choices);
  const previewed = preview !== null && preview.for === key;

  const update = (patch: Partial<Choices>) => {
    setChoices((c) => ({ ...c, ...patch }));
    setError(null);
  };

  const runPreview = async (e: FormEvent) => {
    e.preventDefault();
    if (choices.reason.trim() === '') {
      setError('A reason is required: it is written to the audit log.');
      return;
    }
    setBusy(true);
    try {
      const answer = await client.post<RerunPlan>('/api/v1/reruns', bodyOf(target, choices, true));
      setPreview({ for: key, items: answer.instances });
      setError(null);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  const apply = async () => {
    setBusy(true);
    try {
      const answer = await client.post<RerunStarted>('/api/v1/reruns', bodyOf(target, choices, false));
      onDone(answer.instances, answer.batchId);
    } catch (err) {
      setError(errorText(err));
      setBusy(false);
    }
  };

  return (
    <dialog
      open
      aria-labelledby="rerun-title"
      data-testid="rerun-dialog"
      onKeyDown={(e) => {
        if (e.key === 'Escape') onClose();
      }}
    >
      <article>
        <header>
          <button type="button" aria-label="Close" rel="prev" onClick={onClose} />
          <h3 id="rerun-title">Rerun</h3>
        </header>
        <form onSubmit={(e) => void runPreview(e)}>
          <fieldset>
            <legend>What</legend>
            {target.mode === 'instance' && (
              <label>
                <input type="radio" name="mode" checked={choices.mode === 'instance'} onChange={() => update({ mode: 'instance' })} />
                This instance (#{target.instanceId}) only
              </label>
            )}
            <label>
              <input type="radio" name="mode" checked={choices.mode === 'dag'} onChange={() => update({ mode: 'dag' })} />
              {target.mode === 'instance' ? target.taskName : target.root} and everything downstream of it
            </label>
            <label>
              <input type="radio" name="mode" checked={choices.mode === 'failed'} onChange={() => update({ mode: 'failed' })} />
              Only the failed and canceled instances under {target.mode === 'instance' ? target.taskName : target.root}
            </label>
          </fieldset>
          {choices.mode !== 'instance' && (
            <label>
              Business date
              <input type="date" required value={choices.bizDate} onChange={(e) => update({ bizDate: e.target.value })} />
            </label>
          )}
          <label>
            Reason (audited)
            <input name="reason" required maxLength={2048} value={choices.reason} placeholder="e.g. upstream data fixed" onChange={(e) => update({ reason: e.target.value })} />
          </label>
          {can(principal.role, 'admin') && (
            <label>
              <input type="checkbox" role="switch" name="forceDownstream" checked={choices.forceDownstream} onChange={(e) => update({ forceDownstream: e.target.checked })} />
              forceDownstream: also re-run downstream instances that succeeded
            </label>
          )}
          <ErrorLine error={error} />
          <button type="submit" className="secondary" disabled={busy} aria-busy={busy && !previewed}>
            Preview (dry run)
          </button>
        </form>
        {previewed && (
          <section data-testid="rerun-preview">
            <h4>{preview.items.length === 0 ? 'Nothing would run.' : `${preview.items.length} instance${preview.items.length === 1 ? '' : 's'} would run`}</h4>
            <div className="table-scroll">
              <table className="striped">
                <thead>
                  <tr>
                    <th>action</th>
                    <th>task</th>
                    <th>slot (UTC)</th>
                    <th>biz date</th>
                    <th>now → then</th>
                  </tr>
                </thead>
                <tbody>
                  {preview.items.map((item) => (
                    <tr key={`${item.taskName}@${item.expectedTime}`}>
                      <td>{item.action === 'rerun' ? `rerun #${item.id ?? '?'}` : 'create'}</td>
                      <td>{item.taskName}</td>
                      <td>{utc(item.expectedTime)}</td>
                      <td>{item.bizDate}</td>
                      <td>
                        {item.from !== undefined && <StateBadge state={item.from} />} → <StateBadge state={item.state} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </section>
        )}
        <footer>
          <button type="button" className="secondary outline" onClick={onClose}>
            Close
          </button>
          <button type="button" disabled={!previewed || busy || preview.items.length === 0} aria-busy={busy && previewed} onClick={() => void apply()}>
            Rerun{previewed && preview.items.length > 0 ? ` ${preview.items.length}` : ''}
          </button>
        </footer>
      </article>
    </dialog>
  );
}

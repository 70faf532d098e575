/**
 * Bulk rerun and bulk cancel of a selection of instances (operators). A rerun always previews
 * first: a dry run (`POST /api/v1/reruns`, `mode: instance`, `dryRun: true`) per instance, and
 * "Rerun" is offered only for that preview; a cancel lists what will be canceled and asks to
 * confirm. Each instance's outcome is shown, failures with the API's words.
 */
import { useState, type FormEvent } from 'react';
import { Link } from 'wouter';
import { errorText } from '../api';
import { ErrorLine } from '../components/ErrorLine';
import { StateBadge } from '../components/StateBadge';
import { utc } from '../format';
import { useSession } from '../session';
import type { Instance, RerunPlan, RerunPlanItem } from '../types';
import { eachLimited, splitForCancel, splitForRerun, type BulkSplit } from './logic';
import type { RerunStarted } from './types';

/** Requests of a bulk action in flight at once. */
const CONCURRENCY = 4;

export type BulkKind = 'rerun' | 'cancel';

type Outcome = { id: string; ok: true; text: string; link?: string } | { id: string; ok: false; text: string };

function Skipped({ split }: { split: BulkSplit }) {
  if (split.skip.length === 0) return null;
  return (
    <>
      <h4>Left out ({split.skip.length})</h4>
      <ul data-testid="bulk-skipped">
        {split.skip.map((s) => (
          <li key={s.instance.id} data-instance={s.instance.id}>
            #{s.instance.id} {s.instance.taskName} — {s.why}
          </li>
        ))}
      </ul>
    </>
  );
}

function Outcomes({ outcomes }: { outcomes: Outcome[] }) {
  const failed = outcomes.filter((o) => !o.ok).length;
  return (
    <section data-testid="bulk-results">
      <h4>
        {outcomes.length - failed} done{failed > 0 ? `, ${failed} failed` : ''}
      </h4>
      <ul>
        {outcomes.map((o) => (
          <li key={o.id} data-instance={o.id} data-ok={o.ok ? 'true' : 'false'} className={o.ok ? '' : 'error-text'}>
            <Link href={`/instances/${o.id}`}>#{o.id}</Link>: {o.ok && o.link !== undefined ? <Link href={o.link}>{o.text}</Link> : o.text}
          </li>
        ))}
      </ul>
    </section>
  );
}

export function BulkDialog({ kind, selected: given, onClose, onDone }: { kind: BulkKind; selected: readonly Instance[]; onClose: () => void; onDone: () => void }) {
  const { client } = useSession();
  // What was selected when the dialog opened: the list may clear its selection meanwhile.
  const [selected] = useState(given);
  const split = kind === 'rerun' ? splitForRerun(selected) : splitForCancel(selected);
  const [reason, setReason] = useState('');
  const [plan, setPlan] = useState<{ reason: string; rows: Array<{ id: string; items?: RerunPlanItem[]; error?: string }> } | null>(null);
  const [outcomes, setOutcomes] = useState<Outcome[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const planned = plan !== null && plan.reason === reason.trim();
  const runnable = plan?.rows.filter((r) => r.error === undefined).map((r) => r.id) ?? [];

  const preview = async (e: FormEvent) => {
    e.preventDefault();
    if (reason.trim() === '') {
      setError('A reason is required: it is written to the audit log.');
      return;
    }
    setBusy(true);
    setError(null);
    const why = reason.trim();
    const results = await eachLimited(split.act, CONCURRENCY, (i) => client.post<RerunPlan>('/api/v1/reruns', { mode: 'instance', instanceId: i.id, reason: why, dryRun: true }));
    setPlan({ reason: why, rows: split.act.map((i, n) => { const r = results[n]; return r?.ok === true ? { id: i.id, items: r.value.instances } : { id: i.id, error: errorText(r?.ok === false ? r.error : 'no answer') }; }) });
    setBusy(false);
  };

  const rerun = async () => {
    setBusy(true);
    const why = reason.trim();
    const results = await eachLimited(runnable, CONCURRENCY, (id) => client.post<RerunStarted>('/api/v1/reruns', { mode: 'instance', instanceId: id, reason: why }));
    setOutcomes(
      runnable.map((id, n) => {
        const r = results[n];
        if (r?.ok !== true) return { id, ok: false, text: errorText(r?.ok === false ? r.error : 'no answer') };
        return r.value.batchId === null ? { id, ok: true, text: 'rerun started' } : { id, ok: true, text: `rerun started (batch ${r.value.batchId})`, link: `/reruns/${r.value.batchId}` };
      }),
    );
    setBusy(false);
    onDone();
  };

  const cancel = async () => {
    setBusy(true);
    const results = await eachLimited(split.act, CONCURRENCY, (i) => client.post<Instance>(`/api/v1/instances/${i.id}/cancel`));
    setOutcomes(split.act.map((i, n) => { const r = results[n]; return r?.ok === true ? { id: i.id, ok: true, text: `now ${r.value.state}` } : { id: i.id, ok: false, text: errorText(r?.ok === false ? r.error : 'no answer') }; }));
    setBusy(false);
    onDone();
  };

  const title = kind === 'rerun' ? `Rerun ${selected.length} selected` : `Cancel ${selected.length} selected`;
  return (
    <dialog
      open
      aria-labelledby="bulk-title"
      data-testid={`bulk-${kind}-dialog`}
      onKeyDown={(e) => {
        if (e.key === 'Escape') onClose();
      }}
    >
      <article>
        <header>
          <button type="button" aria-label="Close" rel="prev" onClick={onClose} />
          <h3 id="bulk-title">{title}</h3>
        </header>
        {outcomes !== null ? (
          <Outcomes outcomes={outcomes} />
        ) : kind === 'cancel' ? (
          <>
            {split.act.length === 0 ? (
              <p>Nothing to cancel: every selected instance is final.</p>
            ) : (
              <>
                <h4>Will be canceled ({split.act.length})</h4>
                <ul data-testid="bulk-cancel-list">
                  {split.act.map((i) => (
                    <li key={i.id} data-instance={i.id}>
                      #{i.id} {i.taskName} · {utc(i.expectedTime)} · <StateBadge state={i.state} />
                      {(i.state === 'RUNNING' || i.state === 'DISPATCHED') && <small className="muted"> (killed on its worker)</small>}
                    </li>
                  ))}
                </ul>
              </>
            )}
            <Skipped split={split} />
            <ErrorLine error={error} />
          </>
        ) : (
          <>
            <form onSubmit={(e) => void preview(e)}>
              <p>
                {split.act.length} final instance{split.act.length === 1 ? '' : 's'} can run again (the same slot, its original params, fresh attempts).
              </p>
              <label>
                Reason (audited)
                <input name="reason" required maxLength={2048} value={reason} placeholder="e.g. upstream data fixed" onChange={(e) => setReason(e.target.value)} />
              </label>
              <ErrorLine error={error} />
              <button type="submit" className="secondary" disabled={busy || split.act.length === 0} aria-busy={busy && !planned}>
                Preview (dry run)
              </button>
            </form>
            {planned && (
              <section data-testid="bulk-plan">
                <h4>
                  {runnable.length} would run{plan.rows.length > runnable.length ? `, ${plan.rows.length - runnable.length} refused` : ''}
                </h4>
                <ul>
                  {plan.rows.map((r) => (
                    <li key={r.id} data-instance={r.id} data-ok={r.error === undefined ? 'true' : 'false'} className={r.error === undefined ? '' : 'error-text'}>
                      #{r.id}:{' '}
                      {r.error !== undefined
                        ? r.error
                        : (r.items ?? []).map((p) => `${p.action === 'rerun' ? 'rerun' : 'create'} ${p.taskName} ${utc(p.expectedTime)}: ${p.from === undefined ? '' : `${p.from} → `}${p.state}`).join('; ')}
                    </li>
                  ))}
                </ul>
              </section>
            )}
            <Skipped split={split} />
          </>
        )}
        <footer>
          <button type="button" className="secondary" onClick={onClose}>
            {outcomes === null ? 'Back' : 'Close'}
          </button>
          {outcomes === null && kind === 'cancel' && split.act.length > 0 && (
            <button type="button" className="contrast" data-testid="bulk-confirm" disabled={busy} aria-busy={busy} onClick={() => void cancel()}>
              Cancel {split.act.length} instance{split.act.length === 1 ? '' : 's'}
            </button>
          )}
          {outcomes === null && kind === 'rerun' && planned && runnable.length > 0 && (
            <button type="button" data-testid="bulk-confirm" disabled={busy} aria-busy={busy} onClick={() => void rerun()}>
              Rerun {runnable.length} instance{runnable.length === 1 ? '' : 's'}
            </button>
          )}
        </footer>
      </article>
    </dialog>
  );
}

/**
 * One rerun or backfill batch (`GET /api/v1/reruns/{id}`): its instances counted by state as a
 * stacked progress bar with a legend, polled every 2 s while the batch moves (running, or
 * canceled with instances still finishing) and no more once it is done; its instances
 * (`GET /api/v1/reruns/{id}/instances`, extension) linked; cancel for operators, confirmed,
 * showing what the API canceled.
 */
import { useState } from 'react';
import { Link, useParams } from 'wouter';
import { errorText, type Page } from '../api';
import { ErrorLine } from '../components/ErrorLine';
import { InstanceTable } from '../components/InstanceTable';
import { Loading } from '../components/Loading';
import { Notice } from '../components/Notice';
import { utc } from '../format';
import { BatchProgress } from '../reruns/BatchProgress';
import { batchTarget, isMoving } from '../reruns/progress';
import type { RerunBatch } from '../reruns/types';
import { can } from '../roles';
import { useSession } from '../session';
import type { Instance } from '../types';
import { useApi } from '../use-api';
import '../styles/reruns.css';

const POLL_MS = 2_000;
const INSTANCE_PAGE = 100;

function CancelDialog({ batch, onClose, onCanceled }: { batch: RerunBatch; onClose: () => void; onCanceled: (after: RerunBatch & { canceled?: string[] }) => void }) {
  const { client } = useSession();
  const [reason, setReason] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const notStarted = batch.counts.WAITING + batch.counts.PENDING;
  const confirm = async () => {
    setBusy(true);
    try {
      const body = reason.trim() === '' ? {} : { reason: reason.trim() };
      onCanceled(await client.post<RerunBatch & { canceled?: string[] }>(`/api/v1/reruns/${batch.id}/cancel`, body));
    } catch (err) {
      setError(errorText(err));
      setBusy(false);
    }
  };
  return (
    <dialog open aria-labelledby="cancel-title" data-testid="cancel-dialog" onKeyDown={(e) => e.key === 'Escape' && onClose()}>
      <article>
        <header>
          <button type="button" aria-label="Close" rel="prev" onClick={onClose} />
          <h3 id="cancel-title">Cancel batch #{batch.id}?</h3>
        </header>
        <p>
          Its {notStarted} instance{notStarted === 1 ? '' : 's'} not yet started (WAITING, PENDING) will be canceled (<code>CANCELED_BY_USER</code>); the{' '}
          {batch.counts.DISPATCHED + batch.counts.RUNNING + batch.counts.RETRY_WAIT} dispatched, running or retrying ones run to their end.
        </p>
        <label>
          Reason (audited, optional)
          <input name="cancel-reason" maxLength={2048} value={reason} onChange={(e) => setReason(e.target.value)} />
        </label>
        <ErrorLine error={error} />
        <footer>
          <button type="button" className="secondary outline" onClick={onClose}>
            Keep running
          </button>
          <button type="button" data-action="confirm-cancel" disabled={busy} aria-busy={busy} onClick={() => void confirm()}>
            Cancel batch
          </button>
        </footer>
      </article>
    </dialog>
  );
}

export function RerunBatchPage() {
  const { id = '' } = useParams<{ id: string }>();
  const { principal } = useSession();
  const operator = can(principal.role, 'operator');
  const [moving, setMoving] = useState(true);
  const [cursors, setCursors] = useState<string[]>([]);
  const [confirming, setConfirming] = useState(false);
  const [canceled, setCanceled] = useState<string[] | null>(null);
  const refreshMs = moving ? POLL_MS : 0;
  const batch = useApi<RerunBatch>(`/api/v1/reruns/${encodeURIComponent(id)}`, {}, { refreshMs });
  const instances = useApi<Page<Instance>>(`/api/v1/reruns/${encodeURIComponent(id)}/instances`, { limit: INSTANCE_PAGE, cursor: cursors[cursors.length - 1] }, { refreshMs });
  const b = batch.data;
  const nowMoving = b === undefined ? true : isMoving(b);
  if (nowMoving !== moving) {
    setMoving(nowMoving);
    // The last poll may predate the end: one more read of the instances at the end.
    if (!nowMoving) instances.reload();
  }

  if (b === undefined) {
    return (
      <>
        <h2>Batch #{id}</h2>
        <ErrorLine error={batch.error} />
        {batch.error === null && <Loading what="the batch" />}
        <Link href="/reruns">← All batches</Link>
      </>
    );
  }
  const task = b.mode === 'backfill' && typeof b.request?.['task'] === 'string' ? b.request['task'] : null;
  return (
    <>
      <hgroup>
        <h2>
          {b.mode === 'backfill' ? 'Backfill' : 'Rerun'} #{b.id}{' '}
          <span className={`batch-state batch-state-${b.state}`} data-testid="batch-state">
            {b.state}
          </span>
        </h2>
        <p>{batchTarget(b)}</p>
      </hgroup>
      <BatchProgress counts={b.counts} total={b.total} />
      <div className="actions">
        <small className="muted">{moving ? `updating every ${POLL_MS / 1000} s` : 'final: no longer updating'}</small>
        {operator && b.state === 'running' && (
          <button type="button" className="secondary" data-action="cancel-batch" onClick={() => setConfirming(true)}>
            Cancel batch…
          </button>
        )}
      </div>
      {canceled !== null && (
        <Notice onClose={() => setCanceled(null)}>
          <span data-testid="canceled-notice">
            Canceled {canceled.length} instance{canceled.length === 1 ? '' : 's'} not yet started
            {canceled.length > 0 && ': '}
            {canceled.map((c, n) => (
              <span key={c}>
                {n > 0 && ', '}
                <Link href={`/instances/${c}`}>#{c}</Link>
              </span>
            ))}
            .
          </span>
        </Notice>
      )}
      <ErrorLine error={batch.error} />
      <dl className="batch-facts">
        <dt>mode</dt>
        <dd>{b.mode}</dd>
        {task !== null && (
          <>
            <dt>task</dt>
            <dd>
              <Link href={`/tasks/${encodeURIComponent(task)}`}>{task}</Link>
            </dd>
          </>
        )}
        <dt>reason</dt>
        <dd>{b.reason}</dd>
        <dt>started by</dt>
        <dd>{b.actor}</dd>
        <dt>created</dt>
        <dd>{utc(b.createdAt)}</dd>
        {b.concurrency != null && (
          <>
            <dt>concurrency</dt>
            <dd>at most {b.concurrency} running at once</dd>
          </>
        )}
        {b.forceDownstream === true && (
          <>
            <dt>forceDownstream</dt>
            <dd>yes</dd>
          </>
        )}
        {b.canceledAt != null && (
          <>
            <dt>canceled</dt>
            <dd>
              {utc(b.canceledAt)} by {b.canceledBy ?? '?'}
            </dd>
          </>
        )}
      </dl>
      <section>
        <h3>Instances ({b.total})</h3>
        <ErrorLine error={instances.error} />
        {instances.data === undefined ? instances.error === null && <Loading what="instances" /> : <InstanceTable instances={instances.data.items} />}
        <div className="pager">
          {cursors.length > 0 && (
            <button type="button" className="secondary outline small" onClick={() => setCursors((c) => c.slice(0, -1))}>
              ← Previous
            </button>
          )}
          {instances.data?.nextCursor != null && (
            <button type="button" className="secondary outline small" onClick={() => setCursors((c) => [...c, instances.data?.nextCursor ?? ''])}>
              Next →
            </button>
          )}
        </div>
      </section>
      <Link href="/reruns">← All batches</Link>
      {confirming && (
        <CancelDialog
          batch={b}
          onClose={() => setConfirming(false)}
          onCanceled={(after) => {
            setConfirming(false);
            setCanceled(after.canceled ?? []);
            batch.reload();
            instances.reload();
          }}
        />
      )}
    </>
  );
}

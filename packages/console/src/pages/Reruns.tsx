/**
 * Rerun and backfill batches (`GET /api/v1/reruns`), newest first, paged with the API's cursor:
 * mode, what it re-ran, state, reason, actor, created, a progress bar and total; refreshed
 * every 5 s while one on the page runs. Operators start a backfill here with a task picker
 * (a task page starts one for its own task).
 */
import { useState } from 'react';
import { Link } from 'wouter';
import type { Page } from '../api';
import { BackfillDialog } from '../components/BackfillDialog';
import { ErrorLine } from '../components/ErrorLine';
import { Loading } from '../components/Loading';
import { utc } from '../format';
import { BatchProgress } from '../reruns/BatchProgress';
import { batchTarget, isMoving } from '../reruns/progress';
import type { RerunBatch } from '../reruns/types';
import { can } from '../roles';
import { useSession } from '../session';
import { useApi } from '../use-api';
import { Pager, usePager } from '../components/Pager';
import '../styles/reruns.css';

const PAGE_SIZE = 25;

export function RerunsPage() {
  const { principal } = useSession();
  const operator = can(principal.role, 'operator');
  const pager = usePager();
  const [mode, setMode] = useState('');
  const [backfill, setBackfill] = useState(false);
  const [moving, setMoving] = useState(true);
  const batches = useApi<Page<RerunBatch>>('/api/v1/reruns', { mode, limit: PAGE_SIZE, cursor: pager.cursor }, { refreshMs: moving ? 5_000 : 0 });
  const anyMoving = batches.data?.items.some(isMoving) ?? true;
  if (anyMoving !== moving) setMoving(anyMoving);

  return (
    <>
      <hgroup>
        <h2>Reruns and backfills</h2>
        <p>Batches started by a rerun or a backfill, newest first</p>
      </hgroup>
      <div className="actions reruns-toolbar">
        <select
          name="mode"
          aria-label="Mode"
          value={mode}
          onChange={(e) => {
            pager.reset();
            setMode(e.target.value);
          }}
        >
          <option value="">every mode</option>
          <option value="backfill">backfill</option>
          <option value="dag">dag</option>
          <option value="failed">failed</option>
          <option value="instance">instance</option>
        </select>
        {operator && (
          <button type="button" data-action="backfill" onClick={() => setBackfill(true)}>
            Backfill…
          </button>
        )}
      </div>
      <ErrorLine error={batches.error} />
      {batches.data === undefined ? (
        batches.error === null && <Loading what="batches" />
      ) : batches.data.items.length === 0 ? (
        <p>No batches{mode === '' ? '' : ` of mode ${mode}`}.</p>
      ) : (
        <div className="table-scroll">
          <table className="striped" data-testid="batch-table">
            <thead>
              <tr>
                <th>batch</th>
                <th>mode</th>
                <th>state</th>
                <th>progress</th>
                <th>total</th>
                <th>of</th>
                <th>reason</th>
                <th>actor</th>
                <th>created (UTC)</th>
              </tr>
            </thead>
            <tbody>
              {batches.data.items.map((b) => (
                <tr key={b.id} data-batch={b.id} data-state={b.state} data-mode={b.mode}>
                  <td>
                    <Link href={`/reruns/${b.id}`}>#{b.id}</Link>
                  </td>
                  <td>{b.mode}</td>
                  <td>
                    <span className={`batch-state batch-state-${b.state}`}>{b.state}</span>
                  </td>
                  <td>
                    <BatchProgress counts={b.counts} total={b.total} compact />
                  </td>
                  <td data-column="total">{b.total}</td>
                  <td>{batchTarget(b)}</td>
                  <td>{b.reason}</td>
                  <td>{b.actor}</td>
                  <td>{utc(b.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager pager={pager} nextCursor={batches.data?.nextCursor} />
      {backfill && <BackfillDialog task="" chooseTask onClose={() => setBackfill(false)} />}
    </>
  );
}

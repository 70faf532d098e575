/**
 * Deleting a task (admin): what `DELETE /api/v1/tasks/{name}` does, listed before it is done —
 * the edges that go with it (its parents and children, by name), that its instances stay, that
 * a running instance is not killed — and the task's name typed to confirm.
 */
import { useState } from 'react';
import { Link, useLocation } from 'wouter';
import { errorText, type Page } from '../api';
import { ErrorLine } from '../components/ErrorLine';
import { Loading } from '../components/Loading';
import { StateBadge } from '../components/StateBadge';
import { useApi } from '../use-api';
import type { Instance } from '../types';
import { useSend } from './http';
import type { Dag } from './types';

const NOT_FINAL = 'WAITING,PENDING,DISPATCHED,RUNNING,RETRY_WAIT';

export function DeleteTaskDialog({ task, onClose }: { task: string; onClose: () => void }) {
  const send = useSend();
  const [, navigate] = useLocation();
  const dag = useApi<Dag>('/api/v1/dag');
  const open = useApi<Page<Instance>>('/api/v1/instances', { task, state: NOT_FINAL, limit: 100 });
  const [typed, setTyped] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const parents = (dag.data?.edges ?? []).filter((e) => e.child === task);
  const children = (dag.data?.edges ?? []).filter((e) => e.parent === task);
  const running = open.data?.items ?? [];

  const remove = async () => {
    setBusy(true);
    setError(null);
    try {
      await send('DELETE', `/api/v1/tasks/${encodeURIComponent(task)}`);
      navigate(`/tasks?deleted=${encodeURIComponent(task)}`);
    } catch (err) {
      setError(errorText(err));
      setBusy(false);
    }
  };

  return (
    <dialog
      open
      aria-labelledby="delete-title"
      data-testid="delete-dialog"
      onKeyDown={(e) => {
        if (e.key === 'Escape') onClose();
      }}
    >
      <article>
        <header>
          <button type="button" aria-label="Close" rel="prev" onClick={onClose} />
          <h3 id="delete-title">Delete {task}?</h3>
        </header>
        <ErrorLine error={dag.error ?? open.error} />
        {dag.data === undefined || open.data === undefined ? (
          dag.error === null && open.error === null && <Loading what="what the delete touches" />
        ) : (
          <ul className="consequences" data-testid="delete-consequences">
            <li data-consequence="definition">The definition is removed: no more fires, the name is free again. The audit log keeps the definition as it was.</li>
            <li data-consequence="parents">
              {parents.length === 0 ? (
                'It has no parent edges.'
              ) : (
                <>
                  Its edge{parents.length === 1 ? '' : 's'} from {parents.length === 1 ? 'parent' : 'parents'} {parents.map((e) => e.parent).join(', ')} {parents.length === 1 ? 'goes' : 'go'} with it.
                </>
              )}
            </li>
            <li data-consequence="children">
              {children.length === 0 ? (
                'No task depends on it.'
              ) : (
                <>
                  Its edge{children.length === 1 ? '' : 's'} to {children.length === 1 ? 'child' : 'children'} {children.map((e) => e.child).join(', ')} {children.length === 1 ? 'goes' : 'go'} too: {children.length === 1 ? 'that task no longer waits' : 'those tasks no longer wait'} for it.
                </>
              )}
            </li>
            <li data-consequence="instances">
              Its instances stay (history, logs, <Link href={`/instances?task=${encodeURIComponent(task)}`}>the instance list</Link>), except scheduled slots not yet dispatched, which are withdrawn.
            </li>
            <li data-consequence="running">
              A running instance is not killed: it runs to its end.{' '}
              {running.length === 0 ? (
                'None is in progress now.'
              ) : (
                <>
                  In progress now:{' '}
                  {running.map((i) => (
                    <span key={i.id}>
                      <Link href={`/instances/${i.id}`}>#{i.id}</Link> <StateBadge state={i.state} />{' '}
                    </span>
                  ))}
                  (cancel them on their page first if they must stop).
                </>
              )}
            </li>
          </ul>
        )}
        <label>
          Type the task&apos;s name to confirm
          <input name="confirmName" value={typed} autoComplete="off" placeholder={task} onChange={(e) => setTyped(e.target.value)} />
        </label>
        <ErrorLine error={error} />
        <footer>
          <button type="button" className="secondary outline" onClick={onClose}>
            Cancel
          </button>
          <button type="button" className="danger" data-action="confirm-delete" disabled={typed !== task || busy} aria-busy={busy} onClick={() => void remove()}>
            Delete {task}
          </button>
        </footer>
      </article>
    </dialog>
  );
}

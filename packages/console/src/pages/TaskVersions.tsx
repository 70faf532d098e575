/**
 * The "Versions" section of a task page (#47 "Task versions"): every kept definition (version,
 * when, who), two of them picked to diff (their YAML, through DiffView), and for operators
 * "Roll back to this version" with a confirm and an optional reason (POST …/rollback saves that
 * definition as a new version; audited).
 */
import { useState } from 'react';
import { errorText, type Page } from '../api';
import { DiffView } from '../authoring/DiffView';
import { definitionOf, toYaml } from '../authoring/task-yaml';
import { ErrorLine } from '../components/ErrorLine';
import { Loading } from '../components/Loading';
import { utc } from '../format';
import { useSession } from '../session';
import type { TaskVersion } from '../types';
import { useApi } from '../use-api';

const yamlOf = (v: TaskVersion): string => toYaml(definitionOf(v.definition));

export function TaskVersions({ task, current, operator, onRolledBack }: { task: string; current: number; operator: boolean; onRolledBack: () => void }) {
  const { client } = useSession();
  const versions = useApi<Page<TaskVersion>>(`/api/v1/tasks/${encodeURIComponent(task)}/versions`, { limit: 100 });
  const items = versions.data?.items ?? [];
  const [from, setFrom] = useState<number | null>(null);
  const [to, setTo] = useState<number | null>(null);
  const [confirming, setConfirming] = useState<number | null>(null);
  const [reason, setReason] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  // Until two are picked: the newest version against the one before it. The page mounts this
  // section anew for each version of the task, so a rollback shows the new pair.
  const fromV = from ?? items[1]?.version ?? items[0]?.version;
  const toV = to ?? items[0]?.version;
  const older = items.find((v) => v.version === fromV);
  const newer = items.find((v) => v.version === toV);

  const rollback = async (version: number) => {
    setBusy(true);
    setError(null);
    try {
      await client.post(`/api/v1/tasks/${encodeURIComponent(task)}/rollback`, { version, ...(reason.trim() === '' ? {} : { reason: reason.trim() }) });
      setConfirming(null);
      setReason('');
      onRolledBack();
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section data-testid="task-versions">
      <h3>Versions</h3>
      <ErrorLine error={error ?? versions.error} />
      {versions.data === undefined ? (
        versions.error === null && <Loading what="versions" />
      ) : (
        <>
          <table className="striped" data-testid="versions-table">
            <thead>
              <tr>
                <th>version</th>
                <th>saved (UTC)</th>
                <th>by</th>
                <th title="the older side of the diff">from</th>
                <th title="the newer side of the diff">to</th>
                {operator && <th />}
              </tr>
            </thead>
            <tbody>
              {items.map((v) => (
                <tr key={v.version} data-version={v.version}>
                  <td>
                    {v.version}
                    {v.version === current ? ' (current)' : ''}
                  </td>
                  <td>{utc(v.at)}</td>
                  <td>{v.actor ?? <span className="muted" title="pauseAfterFailures, a calendar change, or saved before versions were kept">system</span>}</td>
                  <td>
                    <input type="radio" name="diff-from" aria-label={`diff from version ${v.version}`} checked={fromV === v.version} onChange={() => setFrom(v.version)} />
                  </td>
                  <td>
                    <input type="radio" name="diff-to" aria-label={`diff to version ${v.version}`} checked={toV === v.version} onChange={() => setTo(v.version)} />
                  </td>
                  {operator && (
                    <td>
                      {v.version !== current && (
                        <button type="button" className="secondary outline" data-action="rollback" disabled={busy} onClick={() => setConfirming(v.version)}>
                          Roll back to this version…
                        </button>
                      )}
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
          {versions.data.nextCursor !== null && <p className="muted">Older versions: axctl tasks versions {task} --cursor …</p>}
          {older !== undefined && newer !== undefined && (
            <div data-testid="versions-diff">
              <h4>
                Version {older.version} → version {newer.version}
              </h4>
              <DiffView before={yamlOf(older)} after={yamlOf(newer)} against={`version ${older.version}`} />
            </div>
          )}
        </>
      )}
      {confirming !== null && (
        <dialog open aria-labelledby="rollback-title" data-testid="rollback-dialog" onKeyDown={(e) => e.key === 'Escape' && setConfirming(null)}>
          <article>
            <header>
              <button type="button" aria-label="Close" rel="prev" onClick={() => setConfirming(null)} />
              <h3 id="rollback-title">
                Roll {task} back to version {confirming}?
              </h3>
            </header>
            <p>
              The definition of version {confirming} is saved again as version {current + 1}; the scheduler follows it at once. Edges stay as they are. The rollback is audited.
            </p>
            <label>
              Reason (optional, audited)
              <input type="text" name="rollback-reason" value={reason} maxLength={2048} onChange={(e) => setReason(e.target.value)} />
            </label>
            <ErrorLine error={error} />
            <footer>
              <button type="button" className="secondary" onClick={() => setConfirming(null)}>
                Cancel
              </button>
              <button type="button" data-action="confirm-rollback" disabled={busy} onClick={() => void rollback(confirming)}>
                Roll back
              </button>
            </footer>
          </article>
        </dialog>
      )}
    </section>
  );
}

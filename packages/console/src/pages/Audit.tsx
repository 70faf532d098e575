/** The audit log (admins): who did what through the API, newest first, with what changed field by field. */
import { useState, type FormEvent } from 'react';
import type { Page } from '../api';
import { AuditDiff } from '../components/AuditDiff';
import { ErrorLine } from '../components/ErrorLine';
import { Loading } from '../components/Loading';
import { utc } from '../format';
import { can } from '../roles';
import { useSession } from '../session';
import { useApi } from '../use-api';
import type { AuditEntry } from '../types';
import { Pager, usePager } from '../components/Pager';
import '../styles/admin.css';

export function AuditPage() {
  const { principal } = useSession();
  const admin = can(principal.role, 'admin');
  const [actor, setActor] = useState('');
  const [filter, setFilter] = useState('');
  const pager = usePager();
  // Not even asked for a lower role: the API would answer 403.
  const audit = useApi<Page<AuditEntry>>(admin ? '/api/v1/audit' : null, { actor: filter, limit: 50, cursor: pager.cursor });

  if (!admin) {
    return (
      <>
        <h2>Audit log</h2>
        <p>The audit log is for admins; this token has the {principal.role} role.</p>
      </>
    );
  }

  const apply = (e: FormEvent) => {
    e.preventDefault();
    pager.reset();
    setFilter(actor.trim());
  };

  return (
    <>
      <h2>Audit log</h2>
      <form role="search" onSubmit={apply}>
        <input type="search" name="actor" placeholder="actor (token name)" aria-label="Actor" value={actor} onChange={(e) => setActor(e.target.value)} />
        <input type="submit" value="Filter" />
      </form>
      <ErrorLine error={audit.error} />
      {audit.data === undefined ? (
        audit.error === null && <Loading what="the audit log" />
      ) : audit.data.items.length === 0 ? (
        <p>No entries.</p>
      ) : (
        <div className="table-scroll">
          <table className="striped" data-testid="audit-table">
            <thead>
              <tr>
                <th>at (UTC)</th>
                <th>actor</th>
                <th>action</th>
                <th>target</th>
                <th>reason</th>
                <th>change</th>
              </tr>
            </thead>
            <tbody>
              {audit.data.items.map((a) => (
                <tr key={a.id} data-action={a.action}>
                  <td>{utc(a.at)}</td>
                  <td title={a.actor.tokenId === null ? undefined : `token #${a.actor.tokenId}`}>{a.actor.name}</td>
                  <td>
                    <code>{a.action}</code>
                  </td>
                  <td>{a.target}</td>
                  <td>{a.reason ?? ''}</td>
                  <td data-column="change">
                    {(a.before !== undefined || a.after !== undefined) && (
                      <>
                        <AuditDiff before={a.before} after={a.after} />
                        <details>
                          <summary>
                            <small>whole entry</small>
                          </summary>
                          <pre className="output">{JSON.stringify({ before: a.before, after: a.after }, null, 2)}</pre>
                        </details>
                      </>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager pager={pager} nextCursor={audit.data?.nextCursor} />
    </>
  );
}

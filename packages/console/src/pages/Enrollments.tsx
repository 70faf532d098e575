/**
 * Worker enrollments (admins; ADMIN-API.md "Workers", docs/teams.md "Worker enrollments"): the
 * enrollments whose teams are all the signed-in token's, with the workers connected under each;
 * a form to enroll workers for teams (the credential shown once, for AX_WORKER_CREDENTIAL_FILE);
 * revoke, which cuts its workers off at once.
 */
import { useState } from 'react';
import type { Page } from '../api';
import { AdminNav } from '../admin/AdminNav';
import { ConfirmButton } from '../admin/ConfirmButton';
import { failureText } from '../admin/failure';
import { defaultTeams, itemsOf, teamChoices, teamsLabel } from '../admin/forms';
import { SecretOnce } from '../admin/SecretOnce';
import { useCreate } from '../admin/use-create';
import { TeamsPicker } from '../admin/TeamsPicker';
import { useSend } from '../authoring/http';
import { ErrorLine } from '../components/ErrorLine';
import { Loading } from '../components/Loading';
import { Notice } from '../components/Notice';
import { utc } from '../format';
import { can } from '../roles';
import { useSession } from '../session';
import { useTeamNames } from '../teams';
import type { CreatedWorkerEnrollment, WorkerEnrollment } from '../types';
import { useApi } from '../use-api';
import '../styles/admin.css';

type StateFilter = 'live' | 'revoked' | 'all';

function CreateEnrollment({ onCreated }: { onCreated: (created: CreatedWorkerEnrollment) => void }) {
  const { principal } = useSession();
  const send = useSend();
  const { names } = useTeamNames();
  const [name, setName] = useState('');
  const [tags, setTags] = useState('');
  const [teams, setTeams] = useState<string[] | null>(null);
  // The form shows once the team names are known; until then nothing submits.
  const picked = teams ?? defaultTeams(principal, names ?? []);
  const form = useCreate(
    () => send<CreatedWorkerEnrollment>('POST', '/api/v1/workers/enrollments', { body: { name: name.trim(), teams: picked, tags: itemsOf(tags) } }),
    (created) => {
      setName('');
      setTags('');
      onCreated(created);
    },
  );
  if (names === undefined) return <Loading what="teams" />;

  return (
    <form className="admin-form" data-testid="enrollment-form" onSubmit={form.submit}>
      <h3>Enroll workers</h3>
      <ErrorLine error={form.error} />
      <fieldset disabled={form.saving}>
        <div className="grid-2 tight">
          <label>
            Name
            <input name="name" value={name} required maxLength={64} placeholder="pay-pool" onChange={(e) => setName(e.target.value)} />
            <small className="muted">a machine pool: a-z, 0-9, "_", "-", "."; unique among live enrollments</small>
          </label>
          <label>
            Tags
            <input name="tags" value={tags} placeholder="any" onChange={(e) => setTags(e.target.value)} />
            <small className="muted">tags its workers may offer, comma-separated; empty: any</small>
          </label>
        </div>
        <TeamsPicker choices={teamChoices(principal, names)} value={picked} onChange={setTeams} />
        <button type="submit">Create enrollment</button>
      </fieldset>
    </form>
  );
}

export function EnrollmentsPage() {
  const { principal } = useSession();
  const send = useSend();
  const admin = can(principal.role, 'admin');
  const [state, setState] = useState<StateFilter>('live');
  const enrollments = useApi<Page<WorkerEnrollment>>(admin ? '/api/v1/workers/enrollments' : null, { state, limit: 200 }, { refreshMs: 15_000 });
  const [created, setCreated] = useState<CreatedWorkerEnrollment | null>(null);
  const [revoked, setRevoked] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  if (!admin) {
    return (
      <>
        <h2>Worker enrollments</h2>
        <p data-testid="needs-admin">Worker enrollments are managed by admins; this token has the {principal.role} role.</p>
      </>
    );
  }

  const revoke = async (e: WorkerEnrollment) => {
    try {
      await send('DELETE', `/api/v1/workers/enrollments/${encodeURIComponent(e.id)}`);
      setError(null);
      setRevoked(e.name);
      enrollments.reload();
    } catch (err) {
      setError(failureText(err));
    }
  };

  return (
    <>
      <AdminNav />
      <hgroup>
        <h2>Worker enrollments</h2>
        <p>Machine pools allowed to run your teams' work, each with its own RabbitMQ and Redis login; revoking one disconnects its workers at once</p>
      </hgroup>
      {created !== null && (
        <SecretOnce title={`Credential of ${created.name} (${created.id}, ${teamsLabel(created.teams)})`} secret={created.credential} onClose={() => setCreated(null)}>
          Put it in a file readable by the worker only and point AX_WORKER_CREDENTIAL_FILE at it.
        </SecretOnce>
      )}
      {revoked !== null && <Notice onClose={() => setRevoked(null)}>Revoked enrollment {revoked}</Notice>}
      <div className="filters">
        <select name="state" aria-label="State" data-testid="enrollment-state" value={state} onChange={(e) => setState(e.target.value as StateFilter)}>
          <option value="live">live</option>
          <option value="revoked">revoked</option>
          <option value="all">all</option>
        </select>
      </div>
      <ErrorLine error={error ?? enrollments.error} />
      {enrollments.data === undefined ? (
        enrollments.error === null && <Loading what="enrollments" />
      ) : enrollments.data.items.length === 0 ? (
        <p>No {state === 'all' ? '' : `${state} `}enrollments.</p>
      ) : (
        <div className="table-scroll">
          <table className="striped" data-testid="enrollment-table">
            <thead>
              <tr>
                <th>id</th>
                <th>name</th>
                <th>teams</th>
                <th>tags</th>
                <th>workers now</th>
                <th>created (UTC)</th>
                <th>state</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {enrollments.data.items.map((e) => (
                <tr key={e.id} data-enrollment={e.name} data-state={e.revokedAt === null ? 'live' : 'revoked'}>
                  <td>
                    <code>{e.id}</code>
                  </td>
                  <td data-column="name">{e.name}</td>
                  <td data-column="teams">{teamsLabel(e.teams)}</td>
                  <td data-column="tags">{e.tags.length === 0 ? <span className="muted">any</span> : e.tags.map((t) => <kbd key={t}>{t}</kbd>)}</td>
                  <td data-column="workers">{e.workers.length === 0 ? <span className="muted">none</span> : e.workers.join(', ')}</td>
                  <td>
                    {utc(e.createdAt)}
                    {e.createdBy !== null && <small className="muted block">by {e.createdBy}</small>}
                  </td>
                  <td data-column="state">{e.revokedAt === null ? 'live' : `revoked ${utc(e.revokedAt)}`}</td>
                  <td>{e.revokedAt === null && <ConfirmButton label="Revoke" confirmLabel={`Revoke ${e.name}`} onConfirm={() => void revoke(e)} />}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <CreateEnrollment
        onCreated={(e) => {
          setRevoked(null);
          setCreated(e);
          enrollments.reload();
        }}
      />
    </>
  );
}

/**
 * Teams (ADMIN-API.md "Teams"): each team the token covers with its share of contended slots
 * (`weight`, R23), run limit, HTTP allowlist and alert routes. An admin of every team (`"*"`, the
 * only role the API lets change a team) edits the description, weight, run limit and allowlist;
 * the API judges every value and its 400 is shown at the field. Alert routes are shown (their
 * URLs whole to an admin only, as the API answers); the same admin edits them, one a line. Such an admin also
 * creates a team and deletes one that owns no task (#47: what `axctl teams create|delete` do).
 * An admin of a team reads its executor key and rotates it (`axctl teams executor-key|rotate-key`).
 */

/** `GET /api/v1/teams/{name}/executor-key` and a rotation's answer. */
interface ExecutorKey {
  team: string;
  keyVersion: number;
  key: string;
  previousValidUntil?: string;
}
import { useState, type FormEvent, type ReactNode } from 'react';
import { errorText, type Page } from '../api';
import { issuesOfError } from '../authoring/field-errors';
import { DetailedApiError, useSend } from '../authoring/http';
import { ErrorLine } from '../components/ErrorLine';
import { Loading } from '../components/Loading';
import { Notice } from '../components/Notice';
import { ConfirmButton } from '../admin/ConfirmButton';
import { failureText } from '../admin/failure';
import { useCreate } from '../admin/use-create';
import { SecretOnce } from '../admin/SecretOnce';
import { can } from '../roles';
import { useSession } from '../session';
import { mayEditTeams, teamFieldOf, teamForm, teamPatch, type TeamField, type TeamForm } from '../team-settings';
import type { Team } from '../types';
import { useApi } from '../use-api';
import '../styles/authoring.css';
import '../styles/teams.css';

/** The most teams one page shows (the API's largest page). */
const TEAMS_PAGE = 500;

type FieldErrors = Partial<Record<TeamField, string[]>>;

function AlertRoutes({ team }: { team: Team }) {
  if (team.alertRoutes.length === 0) return <span className="muted">platform webhook only</span>;
  return (
    <ul className="plain">
      {team.alertRoutes.map((r, i) => (
        <li key={i}>
          <kbd>{r.format}</kbd> {r.url}
          {r.kinds !== undefined && <small className="muted"> ({r.kinds.join(', ')})</small>}
        </li>
      ))}
    </ul>
  );
}

function TeamEditor({ team, onSaved, onCancel }: { team: Team; onSaved: () => void; onCancel: () => void }) {
  const send = useSend();
  const [form, setForm] = useState<TeamForm>(() => teamForm(team));
  const [errors, setErrors] = useState<FieldErrors>({});
  const [error, setError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);

  const save = async (e: FormEvent) => {
    e.preventDefault();
    const body = teamPatch(team, form);
    if (Object.keys(body).length === 0) return onCancel();
    setSaving(true);
    try {
      await send('PATCH', `/api/v1/teams/${encodeURIComponent(team.name)}`, { body });
      onSaved();
    } catch (err) {
      const fields: FieldErrors = {};
      const rest: string[] = [];
      if (err instanceof DetailedApiError) {
        for (const issue of issuesOfError(err.code, err.message, err.details)) {
          const field = teamFieldOf(issue.path);
          if (field === null) rest.push(issue.message);
          else (fields[field] ??= []).push(issue.message);
        }
      }
      setErrors(fields);
      setError(rest.length > 0 ? rest.join(' · ') : Object.keys(fields).length > 0 ? null : errorText(err));
    } finally {
      setSaving(false);
    }
  };

  const field = (label: string, name: TeamField, input: (invalid: object) => ReactNode, hint: string) => {
    const messages = errors[name];
    const invalid = messages === undefined ? {} : { 'aria-invalid': true as const, 'aria-describedby': `team-err-${name}` };
    return (
      <label>
        {label}
        {input(invalid)}
        {messages === undefined ? (
          <small className="muted">{hint}</small>
        ) : (
          <small className="field-error" id={`team-err-${name}`} data-field-error={name} role="alert">
            {messages.join(' · ')}
          </small>
        )}
      </label>
    );
  };
  const set = (name: TeamField) => (e: { target: { value: string } }) => setForm({ ...form, [name]: e.target.value });

  return (
    <form className="team-editor" data-testid="team-form" onSubmit={(e) => void save(e)} noValidate>
      <h3>Team {team.name}</h3>
      <ErrorLine error={error} />
      <fieldset disabled={saving}>
        {field('Description', 'description', (invalid) => <input name="description" value={form.description} {...invalid} onChange={set('description')} />, 'what the team is')}
        <div className="grid-2 tight">
          {field(
            'Weight',
            'weight',
            (invalid) => <input name="weight" inputMode="numeric" value={form.weight} {...invalid} onChange={set('weight')} />,
            'its share of contended slots: 1 to 1000; a team of weight 2 gets twice the slots of a team of weight 1 when both have work waiting',
          )}
          {field(
            'Max running',
            'maxRunning',
            (invalid) => <input name="maxRunning" inputMode="numeric" value={form.maxRunning} placeholder="no limit" {...invalid} onChange={set('maxRunning')} />,
            'most of its instances dispatched or running at once; empty: no limit',
          )}
        </div>
        {field(
          'HTTP allowlist',
          'httpAllow',
          (invalid) => <textarea name="httpAllow" rows={3} value={form.httpAllow} placeholder="the global AX_HTTP_EXECUTOR_ALLOW" {...invalid} onChange={set('httpAllow')} />,
          'hosts its http tasks may call, one a line, within the global AX_HTTP_EXECUTOR_ALLOW; empty: the global list',
        )}
        {field(
          'Alert routes',
          'alertRoutes',
          (invalid) => <textarea name="alertRoutes" rows={3} value={form.alertRoutes} placeholder="https://hooks.slack.com/services/… format=slack kinds=FINAL_FAILURE" {...invalid} onChange={set('alertRoutes')} />,
          "webhooks its alerts go to besides the platform's, one a line: URL, then format=generic|slack|dingtalk|wecom and kinds=A,B (only those kinds); empty: the platform webhook only",
        )}
        <div className="actions">
          <button type="submit">Save</button>
          <button type="button" className="secondary" onClick={onCancel}>
            Cancel
          </button>
        </div>
      </fieldset>
    </form>
  );
}

/** A new team: its name and description (its other settings: Edit, once it exists). */
function CreateTeam({ onCreated }: { onCreated: (team: Team) => void }) {
  const send = useSend();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const form = useCreate(
    () => send<Team>('POST', '/api/v1/teams', { body: { name: name.trim(), ...(description.trim() === '' ? {} : { description: description.trim() }) } }),
    (team) => {
      setName('');
      setDescription('');
      onCreated(team);
    },
  );
  return (
    <form className="team-editor" data-testid="team-create-form" onSubmit={form.submit}>
      <h3>New team</h3>
      <ErrorLine error={form.error} />
      <fieldset disabled={form.saving}>
        <div className="grid-2 tight">
          <label>
            Name
            <input name="name" value={name} required maxLength={64} placeholder="data-platform" onChange={(e) => setName(e.target.value)} />
            <small className="muted">a-z first, then a-z 0-9 _ -; its weight, run limit and allowlist: Edit, once created</small>
          </label>
          <label>
            Description
            <input name="description" value={description} onChange={(e) => setDescription(e.target.value)} />
            <small className="muted">what the team is</small>
          </label>
        </div>
        <button type="submit">Create team</button>
      </fieldset>
    </form>
  );
}

export function TeamsPage() {
  const { principal } = useSession();
  const teams = useApi<Page<Team>>('/api/v1/teams', { limit: TEAMS_PAGE });
  const [editing, setEditing] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const editable = mayEditTeams(principal);
  const send = useSend();

  const [key, setKey] = useState<ExecutorKey | null>(null);
  const admin = can(principal.role, 'admin');

  const showKey = async (name: string, rotate: boolean) => {
    try {
      const path = `/api/v1/teams/${encodeURIComponent(name)}/${rotate ? 'executor-keys' : 'executor-key'}`;
      setKey(await send<ExecutorKey>(rotate ? 'POST' : 'GET', path));
      setError(null);
      if (rotate) teams.reload();
    } catch (err) {
      setError(failureText(err));
    }
  };

  const remove = async (name: string) => {
    try {
      await send('DELETE', `/api/v1/teams/${encodeURIComponent(name)}`);
      setError(null);
      setEditing(null);
      setSaved(null);
      setNotice(`Deleted team ${name}`);
      teams.reload();
    } catch (err) {
      setNotice(null);
      setError(failureText(err));
    }
  };
  const current = teams.data?.items.find((t) => t.name === editing);

  return (
    <>
      <hgroup>
        <h2>Teams</h2>
        <p>{editable ? 'The teams and their settings; changes apply to the next claim' : 'The teams your token covers (changing one needs an admin of every team)'}</p>
      </hgroup>
      {saved !== null && <Notice onClose={() => setSaved(null)}>Saved team {saved}</Notice>}
      {notice !== null && <Notice onClose={() => setNotice(null)}>{notice}</Notice>}
      {key !== null && (
        <SecretOnce title={`Executor key of team ${key.team}, version ${key.keyVersion}`} secret={key.key} onClose={() => setKey(null)}>
          For the team&apos;s HTTP service (its secret store, never a task definition).
          {key.previousValidUntil !== undefined && ` Version ${key.keyVersion - 1} still verifies until ${key.previousValidUntil}.`}
        </SecretOnce>
      )}
      <ErrorLine error={error ?? teams.error} />
      {teams.data === undefined ? (
        teams.error === null && <Loading what="teams" />
      ) : (
        <div className="table-scroll">
          <table className="striped" data-testid="team-table">
            <thead>
              <tr>
                <th>team</th>
                <th>description</th>
                <th>weight</th>
                <th>max running</th>
                <th>HTTP allowlist</th>
                <th>alert routes</th>
                <th>key version</th>
                {admin && <th />}
                {editable && <th />}
              </tr>
            </thead>
            <tbody>
              {teams.data.items.map((t) => (
                <tr key={t.name} data-team={t.name}>
                  <td data-column="name">{t.name}</td>
                  <td data-column="description">{t.description}</td>
                  <td data-column="weight">{t.weight}</td>
                  <td data-column="maxRunning">{t.maxRunning ?? 'no limit'}</td>
                  <td data-column="httpAllow">{t.httpAllow === null ? <span className="muted">global list</span> : t.httpAllow.map((h) => <kbd key={h}>{h}</kbd>)}</td>
                  <td data-column="alertRoutes">
                    <AlertRoutes team={t} />
                  </td>
                  <td data-column="keyVersion">{t.keyVersion}</td>
                  {admin && (
                    <td>
                      <button type="button" className="secondary small" data-action="executor-key" onClick={() => void showKey(t.name, false)}>
                        Executor key
                      </button>{' '}
                      <ConfirmButton label="Rotate key" confirmLabel={`Rotate the key of ${t.name}`} onConfirm={() => void showKey(t.name, true)} />{' '}
                    </td>
                  )}
                  {editable && (
                    <td>
                      <button type="button" className="secondary small" data-action="edit" onClick={() => {
                          setSaved(null);
                          setEditing(t.name);
                        }}>
                        Edit
                      </button>{' '}
                      {t.name !== 'default' && <ConfirmButton label="Delete" confirmLabel={`Delete ${t.name}`} onConfirm={() => void remove(t.name)} />}
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {editable && current !== undefined && (
        <TeamEditor
          key={`${current.name}@${current.updatedAt}`}
          team={current}
          onCancel={() => setEditing(null)}
          onSaved={() => {
            setSaved(current.name);
            setEditing(null);
            teams.reload();
          }}
        />
      )}
      {editable && (
        <CreateTeam
          onCreated={(team) => {
            setSaved(null);
            setError(null);
            setNotice(`Created team ${team.name}`);
            teams.reload();
          }}
        />
      )}
    </>
  );
}

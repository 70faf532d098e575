/**
 * API tokens (admins; ADMIN-API.md "Tokens"): the tokens within the signed-in token's teams,
 * a form to create one (its secret shown once), and revoke. A team admin creates tokens for
 * its own teams only; `*` (every team) is offered to an admin of every team alone.
 */
import { useState } from 'react';
import type { Page } from '../api';
import { AdminNav } from '../admin/AdminNav';
import { ConfirmButton } from '../admin/ConfirmButton';
import { failureText } from '../admin/failure';
import { defaultTeams, teamChoices, teamsLabel } from '../admin/forms';
import { SecretOnce } from '../admin/SecretOnce';
import { useCreate } from '../admin/use-create';
import { TeamsPicker } from '../admin/TeamsPicker';
import { useSend } from '../authoring/http';
import { ErrorLine } from '../components/ErrorLine';
import { Loading } from '../components/Loading';
import { Notice } from '../components/Notice';
import { utc } from '../format';
import { can, ROLES } from '../roles';
import { useSession } from '../session';
import { useTeamNames } from '../teams';
import type { ApiToken, CreatedApiToken, Role } from '../types';
import { useApi } from '../use-api';
import { Pager, usePager } from '../components/Pager';
import '../styles/admin.css';

function CreateToken({ onCreated }: { onCreated: (created: CreatedApiToken) => void }) {
  const { principal } = useSession();
  const send = useSend();
  const { names } = useTeamNames();
  const [name, setName] = useState('');
  const [role, setRole] = useState<Role>('viewer');
  const [teams, setTeams] = useState<string[] | null>(null);
  // The form shows once the team names are known; until then nothing submits.
  const picked = teams ?? defaultTeams(principal, names ?? []);
  const form = useCreate(
    () => send<CreatedApiToken>('POST', '/api/v1/tokens', { body: { name: name.trim(), role, teams: picked } }),
    (created) => {
      setName('');
      onCreated(created);
    },
  );
  if (names === undefined) return <Loading what="teams" />;

  return (
    <form className="admin-form" data-testid="token-form" onSubmit={form.submit}>
      <h3>New token</h3>
      <ErrorLine error={form.error} />
      <fieldset disabled={form.saving}>
        <div className="grid-2 tight">
          <label>
            Name
            <input name="name" value={name} required maxLength={128} placeholder="ci-deploy" onChange={(e) => setName(e.target.value)} />
            <small className="muted">unique among live tokens; shown in the audit log</small>
          </label>
          <label>
            Role
            <select name="role" value={role} onChange={(e) => setRole(e.target.value as Role)}>
              {ROLES.map((r) => (
                <option key={r} value={r}>
                  {r}
                </option>
              ))}
            </select>
            <small className="muted">viewer reads; operator also triggers, reruns and edits; admin also manages tokens and teams</small>
          </label>
        </div>
        <TeamsPicker choices={teamChoices(principal, names)} value={picked} onChange={setTeams} />
        <button type="submit">Create token</button>
      </fieldset>
    </form>
  );
}

export function TokensPage() {
  const { principal } = useSession();
  const send = useSend();
  const admin = can(principal.role, 'admin');
  const pager = usePager();
  const tokens = useApi<Page<ApiToken>>(admin ? '/api/v1/tokens' : null, { limit: 100, cursor: pager.cursor });
  const [created, setCreated] = useState<CreatedApiToken | null>(null);
  const [revoked, setRevoked] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  if (!admin) {
    return (
      <>
        <h2>API tokens</h2>
        <p data-testid="needs-admin">API tokens are managed by admins; this token has the {principal.role} role.</p>
      </>
    );
  }

  const revoke = async (t: ApiToken) => {
    try {
      await send('DELETE', `/api/v1/tokens/${encodeURIComponent(t.id)}`);
      setError(null);
      setRevoked(t.name);
      tokens.reload();
    } catch (err) {
      setError(failureText(err));
    }
  };

  return (
    <>
      <AdminNav />
      <hgroup>
        <h2>API tokens</h2>
        <p>The tokens of your teams, without their secrets; a revoked token is refused at once and its log streams end</p>
      </hgroup>
      {created !== null && (
        <SecretOnce title={`Token ${created.name} (${created.role}, ${teamsLabel(created.teams)})`} secret={created.token} onClose={() => setCreated(null)}>
          Sign in with it, or use it as <code>Authorization: Bearer …</code> (axctl: AX_TOKEN).
        </SecretOnce>
      )}
      {revoked !== null && <Notice onClose={() => setRevoked(null)}>Revoked token {revoked}</Notice>}
      <ErrorLine error={error ?? tokens.error} />
      {tokens.data === undefined ? (
        tokens.error === null && <Loading what="tokens" />
      ) : (
        <div className="table-scroll">
          <table className="striped" data-testid="token-table">
            <thead>
              <tr>
                <th>id</th>
                <th>name</th>
                <th>role</th>
                <th>teams</th>
                <th>created (UTC)</th>
                <th>last used (UTC)</th>
                <th>state</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {tokens.data.items.map((t) => (
                <tr key={t.id} data-token={t.name} data-state={t.revokedAt === null ? 'live' : 'revoked'}>
                  <td>{t.id}</td>
                  <td data-column="name">{t.name}</td>
                  <td data-column="role">{t.role}</td>
                  <td data-column="teams">{teamsLabel(t.teams)}</td>
                  <td>{utc(t.createdAt)}</td>
                  <td>{t.lastUsedAt === null ? <span className="muted">never</span> : utc(t.lastUsedAt)}</td>
                  <td data-column="state">{t.revokedAt === null ? 'live' : `revoked ${utc(t.revokedAt)}`}</td>
                  <td>{t.revokedAt === null && <ConfirmButton label="Revoke" confirmLabel={`Revoke ${t.name}`} onConfirm={() => void revoke(t)} />}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager pager={pager} nextCursor={tokens.data?.nextCursor} />
      <CreateToken
        onCreated={(t) => {
          setRevoked(null);
          setCreated(t);
          tokens.reload();
        }}
      />
    </>
  );
}

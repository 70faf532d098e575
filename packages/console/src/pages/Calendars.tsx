/**
 * Calendars (ADMIN-API.md "Calendars"): the calendars of the signed-in token's teams, each a set
 * of dates its team's tasks naming it do not fire on. Anyone reads them; an operator creates and
 * replaces one (`PUT`), an admin deletes one no task names. `/calendars/NAME` opens one below the list.
 */
import { useState, type FormEvent } from 'react';
import { Link, useLocation, useParams, useSearch } from 'wouter';
import type { Page } from '../api';
import { ConfirmButton } from '../admin/ConfirmButton';
import { failureText } from '../admin/failure';
import { calendarBody, calendarForm, calendarRights, type CalendarForm } from '../admin/forms';
import { useSend } from '../authoring/http';
import { ErrorLine } from '../components/ErrorLine';
import { Loading } from '../components/Loading';
import { Notice } from '../components/Notice';
import { TeamSelect } from '../components/TeamSelect';
import { utc } from '../format';
import { useSession } from '../session';
import { useTeamNames } from '../teams';
import type { Calendar } from '../types';
import { useApi } from '../use-api';
import '../styles/admin.css';

/** The editor of a new calendar (`calendar` undefined) or of one that exists. */
function CalendarEditor({ calendar, onSaved, onCancel }: { calendar: Calendar | undefined; onSaved: (saved: Calendar) => void; onCancel: () => void }) {
  const send = useSend();
  const { names } = useTeamNames();
  const [form, setForm] = useState<CalendarForm>(() => calendarForm(calendar, names?.[0] ?? ''));
  const [error, setError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const set = (field: keyof CalendarForm) => (e: { target: { value: string } }) => setForm({ ...form, [field]: e.target.value });
  const team = form.team === '' ? (names?.[0] ?? '') : form.team;

  const save = async (e: FormEvent) => {
    e.preventDefault();
    const name = form.name.trim();
    if (name === '') return setError('name: must not be empty');
    setSaving(true);
    try {
      const saved = await send<Calendar>('PUT', `/api/v1/calendars/${encodeURIComponent(name)}`, { body: calendarBody({ ...form, team }) });
      setError(null);
      onSaved(saved);
    } catch (err) {
      setError(failureText(err));
    } finally {
      setSaving(false);
    }
  };

  return (
    <form className="admin-form" data-testid="calendar-form" onSubmit={(e) => void save(e)}>
      <h3>{calendar === undefined ? 'New calendar' : `Edit calendar ${calendar.name}`}</h3>
      <ErrorLine error={error} />
      <fieldset disabled={saving}>
        <div className="grid-2 tight">
          <label>
            Name
            <input name="name" value={form.name} readOnly={calendar !== undefined} required placeholder="holidays-fr" onChange={set('name')} />
            <small className="muted">tasks name it as <code>calendar: NAME</code>; unique over all teams</small>
          </label>
          <label>
            Team
            <select name="team" value={team} onChange={set('team')}>
              {(names ?? [team]).map((n) => (
                <option key={n} value={n}>
                  {n}
                </option>
              ))}
            </select>
            <small className="muted">only this team's tasks may use it</small>
          </label>
        </div>
        <label>
          Time zone
          <input name="timezone" value={form.timezone} required onChange={set('timezone')} />
          <small className="muted">an IANA zone (Europe/Paris): a slot is skipped when its date there is listed</small>
        </label>
        <label>
          Dates
          <textarea name="dates" rows={6} value={form.dates} placeholder={'2026-12-25\n2027-01-01'} onChange={set('dates')} />
          <small className="muted">YYYY-MM-DD, one a line or comma-separated; tasks naming it stop firing on them at once</small>
        </label>
        <div className="actions">
          <button type="submit">{calendar === undefined ? 'Create calendar' : 'Save'}</button>
          <button type="button" className="secondary" onClick={onCancel}>
            Cancel
          </button>
        </div>
      </fieldset>
    </form>
  );
}

/** One calendar: its dates, and what the role may do with it. */
function CalendarView({ name, onChanged }: { name: string; onChanged: () => void }) {
  const { principal } = useSession();
  const rights = calendarRights(principal);
  const send = useSend();
  const [, navigate] = useLocation();
  const calendar = useApi<Calendar>(`/api/v1/calendars/${encodeURIComponent(name)}`);
  const [editing, setEditing] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const remove = async () => {
    try {
      await send('DELETE', `/api/v1/calendars/${encodeURIComponent(name)}`);
      onChanged();
      navigate(`/calendars?deleted=${encodeURIComponent(name)}`);
    } catch (err) {
      setError(failureText(err));
    }
  };

  if (calendar.data === undefined) return calendar.error === null ? <Loading what={`calendar ${name}`} /> : <ErrorLine error={calendar.error} />;
  const c = calendar.data;
  if (editing) {
    return (
      <CalendarEditor
        key={`${c.name}@${c.version}`}
        calendar={c}
        onCancel={() => setEditing(false)}
        onSaved={() => {
          setEditing(false);
          calendar.reload();
          onChanged();
        }}
      />
    );
  }
  return (
    <section className="admin-form" data-testid="calendar-view" data-calendar={c.name}>
      <h3>Calendar {c.name}</h3>
      <p>
        team <strong>{c.team}</strong> · zone <strong>{c.timezone}</strong> · version {c.version} · updated {utc(c.updatedAt)}
      </p>
      <ErrorLine error={error ?? calendar.error} />
      {c.dates.length === 0 ? (
        <p className="muted">No dates: tasks naming it fire as scheduled.</p>
      ) : (
        <ul className="dates" data-testid="calendar-dates">
          {c.dates.map((d) => (
            <li key={d}>
              <time dateTime={d}>{d}</time>
            </li>
          ))}
        </ul>
      )}
      <div className="actions">
        {rights.write && (
          <button type="button" className="small" data-action="edit" onClick={() => setEditing(true)}>
            Edit
          </button>
        )}
        {rights.delete && <ConfirmButton label="Delete" confirmLabel={`Delete ${c.name}`} onConfirm={() => void remove()} />}
      </div>
    </section>
  );
}

export function CalendarsPage() {
  const { principal } = useSession();
  const rights = calendarRights(principal);
  const params = useParams<{ name?: string }>();
  const search = new URLSearchParams(useSearch());
  const [, navigate] = useLocation();
  const [team, setTeam] = useState(search.get('team') ?? '');
  // In the URL, so a route change (list ↔ one calendar) keeps them: `?new=1` the create form, `?deleted=NAME` the notice.
  const creating = search.get('new') === '1';
  const deleted = search.get('deleted');
  const calendars = useApi<Page<Calendar>>('/api/v1/calendars', { team, limit: 500 });
  const selected = params.name;

  return (
    <>
      <hgroup>
        <h2>Calendars</h2>
        <p>Dates on which the tasks naming a calendar do not fire (holidays, freezes){rights.write ? '' : '; changing one needs an operator'}</p>
      </hgroup>
      {deleted !== null && <Notice onClose={() => navigate('/calendars')}>Deleted calendar {deleted}</Notice>}
      <div className="filters">
        <TeamSelect value={team} onChange={setTeam} />
        {rights.write && (
          <button type="button" className="small" data-action="new-calendar" onClick={() => navigate('/calendars?new=1')}>
            New calendar
          </button>
        )}
      </div>
      <ErrorLine error={calendars.error} />
      {calendars.data === undefined ? (
        calendars.error === null && <Loading what="calendars" />
      ) : calendars.data.items.length === 0 ? (
        <p>No calendars{team === '' ? '' : ` in team ${team}`}.</p>
      ) : (
        <div className="table-scroll">
          <table className="striped" data-testid="calendar-table">
            <thead>
              <tr>
                <th>name</th>
                <th>team</th>
                <th>time zone</th>
                <th>dates</th>
                <th>next date</th>
                <th>updated (UTC)</th>
              </tr>
            </thead>
            <tbody>
              {calendars.data.items.map((c) => (
                <tr key={c.name} data-calendar={c.name} aria-current={c.name === selected ? 'true' : undefined}>
                  <td data-column="name">
                    <Link href={`/calendars/${encodeURIComponent(c.name)}`}>{c.name}</Link>
                  </td>
                  <td data-column="team">{c.team}</td>
                  <td>{c.timezone}</td>
                  <td data-column="dates">{c.dates.length}</td>
                  <td>{c.dates.find((d) => d >= new Date().toISOString().slice(0, 10)) ?? <span className="muted">none ahead</span>}</td>
                  <td>{utc(c.updatedAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {creating && selected === undefined && rights.write ? (
        <CalendarEditor
          calendar={undefined}
          onCancel={() => navigate('/calendars')}
          onSaved={(saved) => {
            calendars.reload();
            navigate(`/calendars/${encodeURIComponent(saved.name)}`);
          }}
        />
      ) : (
        selected !== undefined && <CalendarView key={selected} name={selected} onChanged={calendars.reload} />
      )}
    </>
  );
}

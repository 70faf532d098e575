/**
 * The admin pages' forms (tokens, worker enrollments, calendars) as the API takes them: what the
 * signed-in token may pick, and the request bodies made from the typed text. Pure; the API is
 * the one judge of a value and its 400 is shown naming the field.
 */
import { can } from '../roles';
import type { Calendar, Principal } from '../types';

/** Whether the token acts for every team (`["*"]`; an older stored session without teams: assumed, the API decides). */
export function coversAllTeams(principal: Principal): boolean {
  return principal.teams === undefined || principal.teams.includes('*');
}

/**
 * The teams a token or an enrollment may be made for by this token: `*` (every team) only for a
 * token of every team, and the teams it covers (`teamNames`, from `GET /api/v1/teams`).
 */
export function teamChoices(principal: Principal, teamNames: readonly string[]): string[] {
  return coversAllTeams(principal) ? ['*', ...teamNames] : [...teamNames];
}

/** The teams picked first: every team for a token of every team, else its one team when it has one. */
export function defaultTeams(principal: Principal, teamNames: readonly string[]): string[] {
  if (coversAllTeams(principal)) return ['*'];
  return teamNames.length === 1 ? [...teamNames] : [];
}

/** `teams` after ticking or unticking `team`: `*` stands alone (the API refuses it with others). */
export function toggleTeam(teams: readonly string[], team: string, on: boolean): string[] {
  if (!on) return teams.filter((t) => t !== team);
  if (team === '*') return ['*'];
  return [...teams.filter((t) => t !== '*' && t !== team), team];
}

/** Items typed one a line or comma-separated, trimmed, empty ones and repeats dropped, in order. */
export function itemsOf(text: string): string[] {
  return [...new Set(text.split(/[\n,]/).map((s) => s.trim()).filter((s) => s !== ''))];
}

/** What may be done to calendars: read (any role), write (operator: create, replace), delete (admin). */
export function calendarRights(principal: Principal): { write: boolean; delete: boolean } {
  return { write: can(principal.role, 'operator'), delete: can(principal.role, 'admin') };
}

/** The calendar form's text fields. */
export interface CalendarForm {
  name: string;
  team: string;
  timezone: string;
  dates: string;
}

/** The form of an existing calendar (dates one a line), or of a new one in `team`. */
export function calendarForm(calendar: Calendar | undefined, team: string): CalendarForm {
  if (calendar === undefined) return { name: '', team, timezone: 'UTC', dates: '' };
  return { name: calendar.name, team: calendar.team, timezone: calendar.timezone, dates: calendar.dates.join('\n') };
}

/** The body of `PUT /api/v1/calendars/{name}`. */
export function calendarBody(form: CalendarForm): { team: string; timezone: string; dates: string[] } {
  return { team: form.team.trim(), timezone: form.timezone.trim(), dates: itemsOf(form.dates) };
}

/** "every team" for `["*"]`, else the names. */
export function teamsLabel(teams: readonly string[]): string {
  return teams.includes('*') ? 'every team' : teams.join(', ');
}

/**
 * A team's settings as the console edits them (ADMIN-API.md "Teams"): the form's text fields,
 * the PATCH body made from them, and who may send it. The API is the one judge of a value: the
 * body carries what was typed (a weight of 0 goes as 0, one of 1.5 as 1.5) and its 400 is shown at the field.
 */
import { numberOrText } from './authoring/draft-form';
import { can } from './roles';
import type { Principal, Team } from './types';

/** The fields of the team form, named as the API's body (and its 400's issue paths) name them. */
export const TEAM_FIELDS = ['description', 'weight', 'maxRunning', 'httpAllow', 'alertRoutes'] as const;

export type TeamField = (typeof TEAM_FIELDS)[number];

export type TeamForm = Record<TeamField, string>;

/** Changing a team needs an admin of every team (`"*"`); anyone else reads. */
export function mayEditTeams(principal: Principal): boolean {
  return can(principal.role, 'admin') && (principal.teams === undefined || principal.teams.includes('*'));
}

/** The form as it starts: the team's values as text (no limit and the global list are empty). */
export function teamForm(team: Team): TeamForm {
  return {
    description: team.description,
    weight: String(team.weight),
    maxRunning: team.maxRunning === null ? '' : String(team.maxRunning),
    httpAllow: (team.httpAllow ?? []).join('\n'),
    alertRoutes: team.alertRoutes.map(routeLine).join('\n'),
  };
}

/** One alert route as a line, `URL [format=F] [kinds=K,K]` (as `axctl teams update --alert-route` takes it). */
export function routeLine(route: Team['alertRoutes'][number]): string {
  return [route.url, ...(route.format === 'generic' ? [] : [`format=${route.format}`]), ...(route.kinds === undefined ? [] : [`kinds=${route.kinds.join(',')}`])].join(' ');
}

/**
 * Routes one a line, `URL [format=F] [kinds=K,K]`; none is `[]` (the platform webhook only).
 * Any other `key=value` goes as typed, for the API to refuse naming it.
 */
export function routesOf(text: string): Array<Record<string, unknown>> {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .map((line) => {
      const [url, ...rest] = line.split(/\s+/);
      const route: Record<string, unknown> = { url };
      for (const part of rest) {
        const at = part.indexOf('=');
        const key = at < 0 ? part : part.slice(0, at);
        const value = at < 0 ? '' : part.slice(at + 1);
        route[key] = key === 'kinds' ? value.split(',').filter((k) => k !== '') : value;
      }
      return route;
    });
}

/** Hosts one a line (or comma-separated); none is null, the global AX_HTTP_EXECUTOR_ALLOW. */
export function hostsOf(text: string): string[] | null {
  const hosts = text
    .split(/[\n,]/)
    .map((h) => h.trim())
    .filter((h) => h !== '');
  return hosts.length === 0 ? null : hosts;
}

/** The PATCH body: only the fields that differ from the team as loaded. */
export function teamPatch(team: Team, form: TeamForm): Record<string, unknown> {
  const before = teamForm(team);
  const body: Record<string, unknown> = {};
  if (form.description !== before.description) body.description = form.description;
  if (form.weight.trim() !== before.weight) body.weight = numberOrText(form.weight) ?? '';
  if (form.maxRunning.trim() !== before.maxRunning) body.maxRunning = numberOrText(form.maxRunning) ?? null;
  if (JSON.stringify(hostsOf(form.httpAllow)) !== JSON.stringify(hostsOf(before.httpAllow))) body.httpAllow = hostsOf(form.httpAllow);
  if (JSON.stringify(routesOf(form.alertRoutes)) !== JSON.stringify(routesOf(before.alertRoutes))) body.alertRoutes = routesOf(form.alertRoutes);
  return body;
}

/** The form field an issue's path (`weight`, `httpAllow.0`, …) belongs to, if any. */
export function teamFieldOf(path: string): TeamField | null {
  const head = path.split(/[.[]/, 1)[0] ?? '';
  return (TEAM_FIELDS as readonly string[]).includes(head) ? (head as TeamField) : null;
}

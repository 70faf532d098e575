/**
 * Calendars (ADMIN-API.md "Calendars"): `GET /api/v1/calendars` (viewer), `GET`/`PUT`
 * (operator)/`DELETE` (admin) `/api/v1/calendars/{name}`. A calendar is a named set of dates in
 * a zone, owned by one team; a task of that team with `"calendar": name` does not fire on a
 * slot whose date in the calendar's zone is listed (the scheduler, the preview and backfills
 * all ask the same core wrapper, `excludeCalendarDates`).
 *
 * Team boundary (CONVENTIONS habit 12): a calendar of a team the token does not cover answers
 * 404 to GET, PUT and DELETE alike and is left out of the list; a PUT naming such a team as the
 * owner answers 404 like a team that does not exist. Names are unique over all teams (as task
 * names are). Every applied write is audited. A change bumps the version of the tasks naming
 * the calendar (store calendars.ts) and tells the schedulers.
 */
import { z } from 'zod';
import { CALENDAR_NAME_PATTERN, MAX_CALENDAR_DATES, calendarBodySchema, compileSchedule, parseCalendarBody, excludeCalendarDates, teamNameSchema, type CalendarBody, type CompiledSchedule } from '@ax/core';
import {
  CalendarInUseError,
  deleteCalendar,
  getCalendar,
  getTeam,
  listCalendars,
  putCalendar,
  tasksUsingCalendar,
  type CalendarRecord,
  type Queryable,
  type TaskRecord,
} from '@ax/store';
import { audit } from '../audit.js';
import type { Principal } from '../auth.js';
import { invalidState, notFound, validationFailed } from '../errors.js';
import { notifyTaskChanged } from '../notify.js';
import { decodeCursor, pageOf, pageQueryShape } from '../pagination.js';
import { defineRoute, type RouteSpec } from '../route.js';
import { listOf } from '../schemas.js';
import { assertTeamVisible, coversTeam, visibleTeams } from '../team-scope.js';
import { writeTransaction } from '../write-transaction.js';

/** `{name}` of a calendar. */
const calendarParams = z.object({
  name: z.string().regex(CALENDAR_NAME_PATTERN, 'must be a calendar name matching ^[a-z0-9][a-z0-9_.-]{0,63}$'),
});

/** The calendar resource. */
export const calendarSchema = z.object({
  name: z.string(),
  team: z.string(),
  timezone: z.string(),
  dates: z.array(z.string()).describe('excluded dates, YYYY-MM-DD, sorted'),
  version: z.int().describe('extension: +1 per replace'),
  createdAt: z.string(),
  updatedAt: z.string(),
});

function calendarResource(c: CalendarRecord): z.infer<typeof calendarSchema> {
  return { name: c.name, team: c.team, timezone: c.timezone, dates: [...c.dates], version: c.version, createdAt: c.createdAt.toISOString(), updatedAt: c.updatedAt.toISOString() };
}

/** The calendar if it exists and the caller covers its team; 404 otherwise (the same answer either way). */
async function mustSeeCalendar(db: Queryable, principal: Principal | null, name: string, opts: { forUpdate?: boolean } = {}): Promise<CalendarRecord> {
  const calendar = await getCalendar(db, name, opts);
  if (calendar === null || !coversTeam(principal, calendar.team)) throw notFound(`calendar ${JSON.stringify(name)}`);
  return calendar;
}

/** The task's fires as the scheduler sees them: its schedule without its calendar's dates (preview, backfill). */
export async function compiledWithCalendar(db: Queryable, task: TaskRecord): Promise<CompiledSchedule> {
  const compiled = compileSchedule(task.definition.schedule, { anchorMs: task.createdAt.getTime() });
  if (task.definition.calendar === null) return compiled;
  const calendar = await getCalendar(db, task.definition.calendar);
  if (calendar === null || calendar.team !== task.definition.team) return compiled;
  return excludeCalendarDates(compiled, { timezone: calendar.timezone, dates: new Set(calendar.dates) });
}

export const calendarRoutes: RouteSpec[] = [
  defineRoute<unknown, { team?: string; limit: number; cursor?: string }>({
    method: 'get',
    path: '/api/v1/calendars',
    access: 'viewer',
    tag: 'calendars',
    summary: "The calendars of the token's teams, by name",
    query: z.object({ team: teamNameSchema.optional().describe('only this team (none if the token does not cover it)'), ...pageQueryShape }),
    responses: { 200: { description: 'a page of calendars', schema: listOf(calendarSchema) } },
    handler: async ({ query, deps, principal }) => {
      const after = decodeCursor(query.cursor);
      if (after === null) throw validationFailed([{ path: 'cursor', message: 'cursor: not a cursor this API returned' }]);
      const teams = query.team === undefined ? visibleTeams(principal) : coversTeam(principal, query.team) ? [query.team] : [];
      const rows = await listCalendars(deps.pool, { teams, ...(after === undefined ? {} : { afterName: after }), limit: query.limit + 1 });
      return { status: 200, body: pageOf(rows, query.limit, (c) => c.name, calendarResource) };
    },
  }),
  defineRoute<{ name: string }>({
    method: 'get',
    path: '/api/v1/calendars/{name}',
    access: 'viewer',
    tag: 'calendars',
    summary: 'One calendar',
    params: calendarParams,
    responses: { 200: { description: 'the calendar', schema: calendarSchema }, 404: { description: 'no such calendar (or not of a team the token covers)' } },
    handler: async ({ params, deps, principal }) => {
      return { status: 200, body: calendarResource(await mustSeeCalendar(deps.pool, principal, params.name)) };
    },
  }),
  defineRoute<{ name: string }, unknown, CalendarBody>({
    method: 'put',
    path: '/api/v1/calendars/{name}',
    access: 'operator',
    tag: 'calendars',
    summary: 'Create or replace a calendar',
    description: `Body \`{"team","timezone","dates":["YYYY-MM-DD",…]}\` (at most ${MAX_CALENDAR_DATES} dates; duplicates dropped, sorted). Tasks naming the calendar get a new version and stop firing on its dates at once.`,
    params: calendarParams,
    body: { schema: calendarBodySchema, parse: parseCalendarBody },
    responses: {
      200: { description: 'the calendar', schema: calendarSchema },
      404: { description: 'the calendar exists in a team the token does not cover, or `team` does not exist / is not covered' },
      409: { description: '`INVALID_STATE`: moving the calendar to another team while tasks of its team name it' },
    },
    handler: async ({ params, body, deps, principal }) => {
      const result = await writeTransaction(deps.pool, async (tx) => {
        const before = await getCalendar(tx, params.name, { forUpdate: true });
        if (before !== null) assertTeamVisible(principal, before.team, `calendar ${JSON.stringify(params.name)}`);
        assertTeamVisible(principal, body.team, `team ${JSON.stringify(body.team)}`);
        if ((await getTeam(tx, body.team)) === null) throw notFound(`team ${JSON.stringify(body.team)}`);
        if (before !== null && before.team !== body.team) {
          const users = await tasksUsingCalendar(tx, params.name);
          if (users.length > 0) throw invalidState(`calendar ${JSON.stringify(params.name)} is used by tasks of team ${JSON.stringify(before.team)}; a task uses calendars of its own team only`, { tasks: users });
        }
        const put = await putCalendar(tx, params.name, body);
        await audit(tx, principal, {
          action: put.created ? 'calendar.create' : 'calendar.replace',
          target: `calendar:${params.name}`,
          team: body.team,
          ...(before === null ? {} : { before: calendarResource(before) }),
          after: calendarResource(put.calendar),
        });
        return put;
      });
      await notifyTaskChanged(deps, result.tasks);
      return { status: 200, body: calendarResource(result.calendar) };
    },
  }),
  defineRoute<{ name: string }>({
    method: 'delete',
    path: '/api/v1/calendars/{name}',
    access: 'admin',
    tag: 'calendars',
    summary: 'Delete a calendar no task names',
    params: calendarParams,
    responses: {
      204: { description: 'deleted' },
      404: { description: 'no such calendar (or not of a team the token covers)' },
      409: { description: '`INVALID_STATE` with `details.tasks`: tasks still name it' },
    },
    handler: async ({ params, deps, principal }) => {
      await writeTransaction(deps.pool, async (tx) => {
        const before = await mustSeeCalendar(tx, principal, params.name, { forUpdate: true });
        try {
          await deleteCalendar(tx, params.name);
        } catch (error) {
          if (error instanceof CalendarInUseError) throw invalidState(error.message, { tasks: [...error.tasks] });
          throw error;
        }
        await audit(tx, principal, { action: 'calendar.delete', target: `calendar:${params.name}`, team: before.team, before: calendarResource(before) });
      });
      return { status: 204 };
    },
  }),
];

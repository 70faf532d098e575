/**
 * `axctl calendars list|get|apply|delete`: calendars, named sets of dates on which the tasks
 * naming one do not fire (ADMIN-API.md "Calendars"). `apply` is the API's PUT: it creates or
 * replaces a calendar from a YAML/JSON file, from flags, or both (flags win); `get -o yaml`
 * prints the file `apply -f` takes back. What a field may hold is the API's to judge.
 */
import { readFile } from 'node:fs/promises';
import type { Calendar, CalendarPage } from '@ax/api-types';
import { parse, stringify } from 'yaml';
import { integer, listOption, positionals, stringOption, UsageError } from '../args.js';
import { oneLine } from '../client.js';
import { CommandFailed, printJson, printMore, type CommandSpec, type Ctx } from '../command.js';
import { formatKeyValues, formatTable } from '../table.js';
import { applyTeam } from './token-team.js';

/** `^[a-z0-9][a-z0-9_.-]{0,63}$` (the API's `CALENDAR_NAME_PATTERN`). */
const CALENDAR_NAME = /^[a-z0-9][a-z0-9_.-]{0,63}$/;

/** Fields of the calendar resource the API sets itself: left out of `-o yaml`, dropped from an applied file. */
const READ_ONLY = ['version', 'createdAt', 'updatedAt'] as const;

function calendarName(where: string, value: string): string {
  if (!CALENDAR_NAME.test(value)) throw new UsageError(`${where}: expected a calendar name (a-z or 0-9 first, then a-z 0-9 _ . -, at most 64), got ${JSON.stringify(value)}`);
  return value;
}

/** The first listed date on or after today (UTC), or undefined. */
const nextDate = (c: Calendar): string | undefined => c.dates.find((d) => d >= new Date().toISOString().slice(0, 10));

/** The calendar as the file `calendars apply -f` takes (name, team, timezone, dates). */
export function calendarYaml(c: Pick<Calendar, 'name' | 'team' | 'timezone' | 'dates'>): string {
  return stringify({ name: c.name, team: c.team, timezone: c.timezone, dates: [...c.dates] }).replace(/\n$/, '');
}

const list: CommandSpec = {
  name: 'calendars list',
  synopsis: '[--team NAME] [--limit N] [--cursor C]',
  summary: "List the calendars of the token's teams, by name (--team: of that team).",
  options: {
    limit: { type: 'string', value: 'N', help: 'page size, 1..500 (default 50)' },
    cursor: { type: 'string', value: 'C', help: 'next page (printed after a full page)' },
  },
  run: async (ctx, args) => {
    positionals(args, [], ctx.command);
    const limit = stringOption(args, 'limit');
    const { body } = await ctx.client.get<CalendarPage>('/api/v1/calendars', {
      team: ctx.team,
      limit: limit === undefined ? undefined : integer('limit', limit, 1, 500),
      cursor: stringOption(args, 'cursor'),
    });
    if (ctx.json) return printJson(ctx, body);
    formatTable<Calendar>(
      [
        { header: 'name', value: (c) => c.name },
        { header: 'team', value: (c) => c.team },
        { header: 'timezone', value: (c) => c.timezone },
        { header: 'dates', value: (c) => c.dates.length, align: 'right' },
        { header: 'next date', value: nextDate },
        { header: 'version', value: (c) => c.version, align: 'right' },
        { header: 'updated', value: (c) => c.updatedAt },
      ],
      body.items,
    ).forEach((l) => ctx.io.out(l));
    printMore(ctx, body.nextCursor);
  },
};

const get: CommandSpec = {
  name: 'calendars get',
  synopsis: '<name> [-o table|json|yaml]',
  summary: 'Show one calendar and its dates (-o yaml: the file `calendars apply -f` takes back).',
  options: {},
  yaml: true,
  run: async (ctx, args) => {
    const [raw] = positionals(args, ['name'], ctx.command) as [string];
    const name = calendarName('<name>', raw);
    const { body: c } = await ctx.client.get<Calendar>(`/api/v1/calendars/${encodeURIComponent(name)}`);
    if (ctx.json) return printJson(ctx, c);
    if (ctx.yaml === true) return ctx.io.out(calendarYaml(c));
    formatKeyValues([
      ['name', c.name],
      ['team', c.team],
      ['timezone', c.timezone],
      ['dates', c.dates.length === 0 ? 'none: tasks naming it fire as scheduled' : c.dates.join(', ')],
      ['next date', nextDate(c)],
      ['version', c.version],
      ['created', c.createdAt],
      ['updated', c.updatedAt],
    ]).forEach((l) => ctx.io.out(l));
  },
};

/** Reads the file to apply (`-` = stdin): one YAML (or JSON) mapping. */
async function readCalendarFile(ctx: Ctx, file: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    if (file === '-') {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
      text = Buffer.concat(chunks).toString('utf8');
    } else {
      text = await readFile(file, 'utf8');
    }
  } catch (err) {
    const e = err as { code?: unknown; message?: unknown };
    const why = e.code === 'ENOENT' ? 'no such file' : e.code === 'EISDIR' ? 'it is a directory' : e.code === 'EACCES' ? 'permission denied' : oneLine(String(e.message));
    throw new CommandFailed(`${ctx.command}: cannot read ${file}: ${why}`);
  }
  const where = file === '-' ? 'standard input' : file;
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    throw new CommandFailed(`${ctx.command}: ${where} is not YAML or JSON: ${oneLine(err instanceof Error ? err.message : String(err))}`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new CommandFailed(`${ctx.command}: ${where}: expected one calendar, a mapping of name, team, timezone and dates`);
  const fields = { ...(doc as Record<string, unknown>) };
  for (const key of READ_ONLY) delete fields[key]; // `get --json` applies back too
  return fields;
}

/** `--dates` values: each one date or several separated by commas or spaces; `--dates ''` = none. */
function datesOf(values: readonly string[]): string[] {
  return values.flatMap((v) => v.split(/[\s,]+/)).filter((d) => d !== '');
}

const apply: CommandSpec = {
  name: 'calendars apply',
  synopsis: "[<name>] [-f FILE] [--team NAME] [--timezone ZONE] [--dates D[,D…]]…",
  summary: 'Create or replace a calendar (PUT) from a YAML/JSON file, from flags, or both (flags win); an operator token.',
  options: {
    file: { type: 'string', short: 'f', value: 'FILE', help: 'YAML or JSON: name, team, timezone, dates (- = stdin; `calendars get -o yaml` prints one)' },
    timezone: { type: 'string', value: 'ZONE', help: "the IANA zone a slot's date is read in (default UTC)" },
    dates: { type: 'string', value: 'D,D', multiple: true, help: "excluded dates YYYY-MM-DD, comma-separated or repeated; --dates '' = none" },
  },
  notes: [
    'The whole calendar is replaced: the dates given are all its dates. The name is <name>, else the file\'s `name`.',
    'The team is the global --team (AX_TEAM), else the file\'s `team`, else the token\'s only team, else "default";',
    'a file naming another team than --team is an error. Tasks naming the calendar stop firing on its dates at once.',
  ],
  run: async (ctx, args) => {
    const [rawName] = args.positionals.length === 0 ? [undefined] : (positionals(args, ['name'], ctx.command) as [string]);
    const file = stringOption(args, 'file');
    const timezone = stringOption(args, 'timezone');
    const dateValues = listOption(args, 'dates');
    if (file === undefined && dateValues.length === 0) throw new UsageError(`${ctx.command}: give -f FILE or --dates (see axctl ${ctx.command} --help)`);
    const fields = file === undefined ? {} : await readCalendarFile(ctx, file);
    const { name: fileName, ...body } = fields;
    if (fileName !== undefined && typeof fileName !== 'string') throw new CommandFailed(`${ctx.command}: ${file ?? ''}: name: expected a calendar name, got ${JSON.stringify(fileName)}`);
    if (rawName !== undefined && fileName !== undefined && rawName !== fileName) throw new UsageError(`${ctx.command}: <name> ${JSON.stringify(rawName)} and the file's name ${JSON.stringify(fileName)} differ; give one`);
    const nameGiven = rawName ?? fileName;
    if (nameGiven === undefined) throw new UsageError(`${ctx.command}: missing <name> (or \`name:\` in the file)`);
    const name = calendarName(rawName === undefined ? 'name' : '<name>', nameGiven);
    if (ctx.team !== undefined && body['team'] !== undefined && body['team'] !== ctx.team) {
      throw new UsageError(`${ctx.command}: --team ${ctx.team} but the file names team ${JSON.stringify(body['team'])}; give one`);
    }
    const team = ctx.team ?? (body['team'] === undefined ? await applyTeam(ctx) : undefined);
    if (team !== undefined) body['team'] = team;
    if (timezone !== undefined) body['timezone'] = timezone;
    if (dateValues.length > 0) body['dates'] = datesOf(dateValues);
    const { body: saved } = await ctx.client.request<Calendar>('PUT', `/api/v1/calendars/${encodeURIComponent(name)}`, { json: body });
    if (ctx.json) return printJson(ctx, saved);
    const count = saved.dates.length === 1 ? '1 date' : `${saved.dates.length} dates`;
    ctx.io.out(`calendar ${saved.name} ${saved.version === 1 ? 'created' : 'replaced'}: team ${saved.team}, zone ${saved.timezone}, ${count} (version ${saved.version})`);
  },
};

const remove: CommandSpec = {
  name: 'calendars delete',
  synopsis: '<name>',
  summary: 'Delete a calendar no task names (an admin token).',
  options: {},
  notes: ['A calendar still named by tasks is refused (409 INVALID_STATE, naming them): change those tasks first.'],
  run: async (ctx, args) => {
    const [raw] = positionals(args, ['name'], ctx.command) as [string];
    const name = calendarName('<name>', raw);
    await ctx.client.request('DELETE', `/api/v1/calendars/${encodeURIComponent(name)}`);
    if (ctx.json) return printJson(ctx, { name, deleted: true });
    ctx.io.out(`calendar ${name} deleted`);
  },
};

export const calendarCommands: readonly CommandSpec[] = [list, get, apply, remove];

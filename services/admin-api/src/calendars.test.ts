/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return, @typescript-eslint/no-unsafe-argument --
   response bodies are untyped JSON here; the assertions check their shape. */
/**
 * Calendars (ADMIN-API.md "Calendars", issue #22) through the API: the team boundary first (a
 * calendar of another team is 404 to GET, PUT and DELETE, missing from lists, and a task cannot
 * name it), then create/replace/delete with audit, and the promise users see: a `0 2 * * *`
 * Asia/Shanghai task with a calendar excluding the next two dates previews and backfills
 * without them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nextFireTimes, dateInZone } from '@ax/core';
import { addToken, startTestApp, taskDef, type TestApp } from './harness.test-helper.js';

let t: TestApp;
let payOperator: string;
let payAdmin: string;
beforeAll(async () => {
  t = await startTestApp();
  for (const name of ['pay', 'ord']) expect((await t.call('POST', '/api/v1/teams', { body: { name } })).status).toBe(201);
  payOperator = await addToken(t.pool, 'pay-operator', 'operator', ['pay']);
  payAdmin = await addToken(t.pool, 'pay-admin', 'admin', ['pay']);
});
afterAll(async () => {
  await t?.close();
});

const ordHolidays = { team: 'ord', timezone: 'Asia/Shanghai', dates: ['2026-12-25', '2026-10-01'] };

describe('calendars: another team is not there (404), whatever the verb', () => {
  it('a pay token cannot read, list, replace, delete or use an ord calendar; it looks exactly like a missing one', async () => {
    expect((await t.call('PUT', '/api/v1/calendars/ord-holidays', { body: ordHolidays })).status).toBe(200);

    const read = await t.call('GET', '/api/v1/calendars/ord-holidays', { token: payOperator });
    const missing = await t.call('GET', '/api/v1/calendars/no-such-calendar', { token: payOperator });
    expect(read.status).toBe(404);
    expect(read.body.error.code).toBe('NOT_FOUND');
    expect(read.body.error.message.replace('ord-holidays', 'X')).toBe(missing.body.error.message.replace('no-such-calendar', 'X'));
    expect((await t.call('GET', '/api/v1/calendars', { token: payOperator })).body).toEqual({ items: [], nextCursor: null });
    expect((await t.call('GET', '/api/v1/calendars?team=ord', { token: payOperator })).body).toEqual({ items: [], nextCursor: null });

    // Taking it over by a PUT naming its own team, or writing into ord: 404, nothing changes.
    const takeover = await t.call('PUT', '/api/v1/calendars/ord-holidays', { token: payOperator, body: { team: 'pay', timezone: 'UTC', dates: [] } });
    expect(takeover.status).toBe(404);
    const intoOrd = await t.call('PUT', '/api/v1/calendars/pay-into-ord', { token: payOperator, body: { ...ordHolidays } });
    expect(intoOrd.status).toBe(404);
    expect((await t.call('GET', '/api/v1/calendars/pay-into-ord')).status).toBe(404);
    expect((await t.call('DELETE', '/api/v1/calendars/ord-holidays', { token: payAdmin })).status).toBe(404);
    const stored = await t.call('GET', '/api/v1/calendars/ord-holidays');
    expect(stored.body).toMatchObject({ team: 'ord', timezone: 'Asia/Shanghai', dates: ['2026-10-01', '2026-12-25'], version: 1 });

    // A pay task naming it gets the answer a free name gets.
    const useOther = await t.call('POST', '/api/v1/tasks', { token: payOperator, body: taskDef('pay_uses_ord', { team: 'pay', calendar: 'ord-holidays' }) });
    const useNone = await t.call('POST', '/api/v1/tasks', { token: payOperator, body: taskDef('pay_uses_none', { team: 'pay', calendar: 'no-such-calendar' }) });
    expect(useOther.status).toBe(400);
    expect(useOther.body.error.details.issues[0]).toMatchObject({ path: 'calendar' });
    expect(useOther.body.error.details.issues[0].message.replace('ord-holidays', 'X')).toBe(useNone.body.error.details.issues[0].message.replace('no-such-calendar', 'X'));
    // Even an admin of every team cannot point a pay task at an ord calendar.
    expect((await t.call('POST', '/api/v1/tasks', { body: taskDef('pay_uses_ord2', { team: 'pay', calendar: 'ord-holidays' }) })).status).toBe(400);
  });
});

describe('calendars: writes', () => {
  it('creates, replaces (dates sorted and deduplicated), audits, refuses a delete while a task names it, deletes', async () => {
    const created = await t.call('PUT', '/api/v1/calendars/pay-days', { token: payOperator, body: { team: 'pay', dates: ['2026-12-31', '2026-12-24', '2026-12-24'] } });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ name: 'pay-days', team: 'pay', timezone: 'UTC', dates: ['2026-12-24', '2026-12-31'], version: 1 });
    const task = await t.call('POST', '/api/v1/tasks', { token: payOperator, body: taskDef('pay_daily', { team: 'pay', calendar: 'pay-days', schedule: { type: 'cron', expr: '0 2 * * *' } }) });
    expect(task.status).toBe(201);
    expect(task.body).toMatchObject({ calendar: 'pay-days', calendarSkippedCount: 0, version: 1 });

    const replaced = await t.call('PUT', '/api/v1/calendars/pay-days', { token: payOperator, body: { team: 'pay', timezone: 'Asia/Shanghai', dates: ['2027-01-01'] } });
    expect(replaced.body).toMatchObject({ timezone: 'Asia/Shanghai', dates: ['2027-01-01'], version: 2 });
    // The task's behaviour changed with it: its version moved (R3 fences schedulers holding the old dates).
    expect((await t.call('GET', '/api/v1/tasks/pay_daily')).body.version).toBe(2);

    const audit = await t.call('GET', '/api/v1/audit');
    const actions = audit.body.items.filter((a: any) => a.target === 'calendar:pay-days').map((a: any) => [a.action, a.actor.name, a.team]);
    expect(actions).toEqual(expect.arrayContaining([['calendar.create', 'pay-operator', 'pay'], ['calendar.replace', 'pay-operator', 'pay']]));

    const inUse = await t.call('DELETE', '/api/v1/calendars/pay-days', { token: payAdmin });
    expect(inUse.status).toBe(409);
    expect(inUse.body.error).toMatchObject({ code: 'INVALID_STATE', details: { tasks: ['pay_daily'] } });
    expect((await t.call('DELETE', '/api/v1/calendars/pay-days', { token: payOperator })).status).toBe(403);
    await t.call('DELETE', '/api/v1/tasks/pay_daily');
    expect((await t.call('DELETE', '/api/v1/calendars/pay-days', { token: payAdmin })).status).toBe(204);
    expect((await t.call('GET', '/api/v1/calendars/pay-days')).status).toBe(404);
  });

  it('refuses bad bodies with 400 naming the field', async () => {
    const cases: Array<[string, unknown, string]> = [
      ['bad-date', { dates: ['2026-02-30'] }, 'dates[0]'],
      ['bad-zone', { timezone: 'Mars/Olympus', dates: [] }, 'timezone'],
      ['extra', { dates: [], holidays: [] }, 'holidays'],
      ['many', { dates: Array.from({ length: 10_001 }, (_, i) => `2026-01-${String((i % 28) + 1).padStart(2, '0')}`) }, 'dates'],
    ];
    for (const [name, body, path] of cases) {
      const res = await t.call('PUT', `/api/v1/calendars/${name}`, { body });
      expect(res.status, name).toBe(400);
      expect(res.body.error.details.issues.map((i: any) => i.path), name).toContain(path);
    }
    expect((await t.call('PUT', '/api/v1/calendars/Bad%20Name', { body: { dates: [] } })).status).toBe(400);
  });
});

describe('calendars: preview and backfill honour them', () => {
  it('a 0 2 * * * Asia/Shanghai task with a calendar excluding the next two dates previews and backfills without them', async () => {
    const zone = 'Asia/Shanghai';
    const upcoming = nextFireTimes({ type: 'cron', expr: '0 2 * * *', timezone: zone }, Date.now(), 6, { anchorMs: 0 });
    const dates = upcoming.map((ms) => dateInZone(ms, zone));
    const excluded = dates.slice(0, 2);
    expect((await t.call('PUT', '/api/v1/calendars/cn-holidays', { body: { team: 'default', timezone: zone, dates: excluded } })).status).toBe(200);
    const created = await t.call('POST', '/api/v1/tasks', { body: taskDef('cn_report', { schedule: { type: 'cron', expr: '0 2 * * *', timezone: zone }, calendar: 'cn-holidays', enabled: false }) });
    expect(created.status).toBe(201);

    const preview = await t.call('GET', '/api/v1/tasks/cn_report/preview?count=4');
    expect(preview.status).toBe(200);
    expect(preview.body.fireTimes).toEqual(upcoming.slice(2, 6).map((ms) => new Date(ms).toISOString()));
    expect(preview.body.fireTimes.map((iso: string) => dateInZone(Date.parse(iso), zone))).not.toContain(excluded[0]);

    // Backfill over the next five business dates: three slots, none on the excluded dates.
    const body = { mode: 'backfill', task: 'cn_report', from: dates[0], to: dates[4], reason: 'calendar test' };
    const dry = await t.call('POST', '/api/v1/reruns', { body: { ...body, dryRun: true } });
    expect(dry.status).toBe(200);
    const planned = dry.body.instances.map((i: any) => i.expectedTime);
    expect(planned).toEqual(upcoming.slice(2, 5).map((ms) => new Date(ms).toISOString()));
    const run = await t.call('POST', '/api/v1/reruns', { body });
    expect(run.status).toBe(202);
    const [rows] = await t.pool.query<any[]>("SELECT expected_time FROM task_instance WHERE task_name = 'cn_report' ORDER BY expected_time");
    expect(rows.map((r: any) => dateInZone(r.expected_time.getTime(), zone))).toEqual(dates.slice(2, 5));
  });
});

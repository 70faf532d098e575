/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return --
   response bodies and result rows are untyped JSON here; the assertions check their shape. */
/**
 * The dashboard's five figures (total, failed, average trigger delay, longest run, top failing)
 * and the hourly chart, against values computed by hand from the instances and executions this
 * test writes (issue #20): delay from when an instance became due — a dependency instance when
 * it was created, a WAITING one at its DEPS_MET, never at its biz date's midnight — to its current
 * execution's start; durations from executions, not from the instance row's times (which the
 * broker writes at the ACK). Also the instance time fields and a disabled task's next fire time.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, taskDef, type TestApp } from './harness.test-helper.js';

let t: TestApp;
const D = '2026-11-10';
const at = (hms: string, day = D): Date => new Date(`${day}T${hms}Z`);
const ids: Record<string, string> = {};

interface Row {
  task: string;
  trigger?: string;
  state: string;
  bizDate?: string;
  expected: Date;
  due?: Date;
  created: Date;
  attempt?: number;
  /** The instance row's own times, as the broker writes them (at the ACK / result). */
  rowStarted?: Date | null;
  rowEnded?: Date | null;
  executions?: Array<{ acked: Date; started: Date | null; ended: Date | null; current?: boolean }>;
  depsMet?: Date;
}

async function insert(name: string, r: Row): Promise<void> {
  const [task] = await t.pool.query<any[]>('SELECT id FROM task WHERE name = ?', [r.task]);
  const executions = (r.executions ?? []).map((e, index) => ({ ...e, id: randomUUID(), attempt: index + 1 }));
  const current = executions.find((e) => e.current === true) ?? executions[executions.length - 1];
  const [res] = await t.pool.query<any>(
    `INSERT INTO task_instance (task_id, task_name, expected_time, run_no, biz_date, \`trigger\`, state, attempt, max_attempts, due_at, params,
                                priority, worker_id, current_execution_id, created_at, started_at, ended_at)
     VALUES (?, ?, ?, 1, ?, ?, ?, ?, 3, ?, '{}', 5, 'w1', ?, ?, ?, ?)`,
    [
      task[0].id,
      r.task,
      r.expected,
      r.bizDate ?? D,
      r.trigger ?? 'schedule',
      r.state,
      r.attempt ?? executions.length,
      r.due ?? r.expected,
      current?.id ?? null,
      r.created,
      r.rowStarted ?? null,
      r.rowEnded ?? null,
    ],
  );
  ids[name] = String(res.insertId);
  for (const e of executions) {
    await t.pool.query(
      `INSERT INTO task_execution (execution_id, instance_id, attempt, run_no, worker_id, state, dispatched_at, acked_at, started_at, ended_at)
       VALUES (?, ?, ?, 1, 'w1', ?, ?, ?, ?, ?)`,
      [e.id, res.insertId, e.attempt, e.ended === null ? 'RUNNING' : 'SUCCESS', new Date(e.acked.getTime() - 10), e.acked, e.started, e.ended],
    );
  }
  if (r.depsMet !== undefined) {
    // As the scheduler's promotion writes it: the event and promoted_at, in one transaction.
    await t.pool.query("INSERT INTO event_log (instance_id, type, at, message) VALUES (?, 'DEPS_MET', ?, 'every parent edge is satisfied')", [res.insertId, r.depsMet]);
    await t.pool.query('UPDATE task_instance SET promoted_at = ? WHERE id = ?', [r.depsMet, res.insertId]);
  }
}

beforeAll(async () => {
  t = await startTestApp({ now: () => Date.parse(`${D}T22:00:00.000Z`) });
  for (const name of ['s_ok', 's_fail', 's_fail2', 'dep_child', 'dep_waiting']) {
    expect((await t.call('POST', '/api/v1/tasks', { token: t.tokens.operator, body: taskDef(name) })).status).toBe(201);
  }
  // A: ran 02:00:01 → 02:00:04 (3000 ms); the row says started = ended = 02:00:04.050 (the ACK). Delay 1000.
  await insert('A', {
    task: 's_ok', state: 'SUCCESS', expected: at('02:00:00.000'), created: at('02:00:00.200'),
    rowStarted: at('02:00:04.050'), rowEnded: at('02:00:04.050'),
    executions: [{ acked: at('02:00:00.900'), started: at('02:00:01.000'), ended: at('02:00:04.000') }],
  });
  // B: FAILED after 3 attempts (10 s, 20 s, 5 s); due_at is the third attempt's retry time; row started_at NULL. Delay 300.
  await insert('B', {
    task: 's_fail', state: 'FAILED', expected: at('05:00:00.000'), due: at('05:02:00.000'), created: at('05:00:00.100'),
    rowStarted: null, rowEnded: at('05:02:05.400'),
    executions: [
      { acked: at('05:00:00.400'), started: at('05:00:00.500'), ended: at('05:00:10.500') },
      { acked: at('05:00:59.900'), started: at('05:01:00.000'), ended: at('05:01:20.000') },
      { acked: at('05:02:00.200'), started: at('05:02:00.300'), ended: at('05:02:05.300') },
    ],
  });
  // C: a dependency instance (schedule none) of biz date D in Asia/Shanghai: expected_time and
  // due_at are its midnight, D-1 16:00 UTC; created when its parents were satisfied, 09:30. Delay 250, ran 30 s.
  await insert('C', {
    task: 'dep_child', trigger: 'dependency', state: 'SUCCESS', expected: at('16:00:00.000', '2026-11-09'), created: at('09:30:00.000'),
    rowStarted: at('09:30:30.300'), rowEnded: at('09:30:30.300'),
    executions: [{ acked: at('09:30:00.200'), started: at('09:30:00.250'), ended: at('09:30:30.250') }],
  });
  // W: created WAITING at its 03:00 slot, promoted at 07:00 (DEPS_MET; due_at stays 03:00). Delay 400.
  await insert('W', {
    task: 'dep_waiting', state: 'SUCCESS', expected: at('03:00:00.000'), created: at('03:00:00.050'), depsMet: at('07:00:00.000'),
    executions: [{ acked: at('07:00:00.350'), started: at('07:00:00.400'), ended: at('07:00:01.400') }],
  });
  // R: 9 ms of work. Delay 100.
  await insert('R', {
    task: 's_fail2', state: 'FAILED', expected: at('10:00:00.000'), created: at('10:00:00.010'),
    rowStarted: at('10:00:00.500'), rowEnded: at('10:00:00.500'),
    executions: [{ acked: at('10:00:00.090'), started: at('10:00:00.100'), ended: at('10:00:00.109') }],
  });
  // X: delay 2000.
  await insert('X', {
    task: 's_fail', state: 'FAILED', expected: at('11:00:00.000'), created: at('11:00:00.000'),
    executions: [{ acked: at('11:00:01.900'), started: at('11:00:02.000'), ended: at('11:00:03.000') }],
  });
  // RUN: running, no reported start yet: started at its ACK, 12:00:00.600. Delay 600.
  await insert('RUN', {
    task: 's_ok', state: 'RUNNING', expected: at('12:00:00.000'), created: at('12:00:00.000'), rowStarted: at('12:00:00.700'),
    executions: [{ acked: at('12:00:00.600'), started: null, ended: null }],
  });
  // P: not started yet.
  await insert('P', { task: 's_ok', state: 'PENDING', expected: at('20:00:00.000'), created: at('20:00:00.000') });
  // Outside the day: due the day before and the day after.
  await insert('before', {
    task: 's_fail', state: 'FAILED', expected: at('23:00:00.000', '2026-11-09'), created: at('23:00:00.000', '2026-11-09'),
    executions: [{ acked: at('23:00:00.000', '2026-11-09'), started: at('23:00:00.000', '2026-11-09'), ended: at('23:59:00.000', '2026-11-09') }],
  });
  await insert('after', { task: 's_fail', state: 'FAILED', expected: at('01:00:00.000', '2026-11-11'), created: at('01:00:00.000', '2026-11-11') });
});

afterAll(async () => {
  await t?.close();
});

describe('GET /api/v1/stats/today: the five figures', () => {
  it('equal the hand-computed values', async () => {
    const res = await t.call('GET', '/api/v1/stats/today', { token: t.tokens.viewer });
    expect(res.status).toBe(200);
    // total: A B C W R X RUN P; delays 1000 300 250 400 100 2000 600 → 4650 / 7 = 664.29;
    // longest run: C's 30 000 ms (B's longest attempt 20 000; no instance row time counts).
    expect(res.body).toEqual({
      day: D,
      total: 8,
      succeeded: 3,
      failed: 3,
      running: 1,
      avgTriggerDelayMs: 664,
      maxDurationMs: 30_000,
      topFailing: [
        { task: 's_fail', count: 2 },
        { task: 's_fail2', count: 1 },
      ],
    });
  });
});

describe('GET /api/v1/stats/hourly: the chart', () => {
  it('puts each instance in the hour it became due, with its delay', async () => {
    const res = await t.call('GET', `/api/v1/stats/hourly?day=${D}`, { token: t.tokens.viewer });
    expect(res.status).toBe(200);
    expect(res.body.hours).toHaveLength(24);
    const busy = res.body.hours.filter((h: any) => h.runs > 0);
    const hour = (hh: string): string => `${D}T${hh}:00:00.000Z`;
    expect(busy).toEqual([
      { hour: hour('02'), runs: 1, succeeded: 1, failed: 0, avgFireLagMs: 200, avgTriggerDelayMs: 1000 },
      { hour: hour('05'), runs: 1, succeeded: 0, failed: 1, avgFireLagMs: 100, avgTriggerDelayMs: 300 },
      { hour: hour('07'), runs: 1, succeeded: 1, failed: 0, avgFireLagMs: 50, avgTriggerDelayMs: 400 },
      // the dependency instance: at 09:00 when it was created, not at 00:00; not a schedule fire (no lag)
      { hour: hour('09'), runs: 1, succeeded: 1, failed: 0, avgFireLagMs: null, avgTriggerDelayMs: 250 },
      { hour: hour('10'), runs: 1, succeeded: 0, failed: 1, avgFireLagMs: 10, avgTriggerDelayMs: 100 },
      { hour: hour('11'), runs: 1, succeeded: 0, failed: 1, avgFireLagMs: 0, avgTriggerDelayMs: 2000 },
      { hour: hour('12'), runs: 1, succeeded: 0, failed: 0, avgFireLagMs: 0, avgTriggerDelayMs: 600 },
      { hour: hour('20'), runs: 1, succeeded: 0, failed: 0, avgFireLagMs: 0, avgTriggerDelayMs: null },
    ]);
    expect(res.body.hours[0]).toEqual({ hour: hour('00'), runs: 0, succeeded: 0, failed: 0, avgFireLagMs: null, avgTriggerDelayMs: null });
  });
});

describe('instance time fields come from the current execution', () => {
  it('startedAt is when the current execution started, durationMs its run, not the row written at the ACK', async () => {
    const a = await t.call('GET', `/api/v1/instances/${ids['A']}`, { token: t.tokens.viewer });
    expect(a.body).toMatchObject({ startedAt: at('02:00:01.000').toISOString(), endedAt: at('02:00:04.000').toISOString(), durationMs: 3000 });
    expect(a.body.executions.map((e: any) => [e.startedAt, e.endedAt, e.durationMs])).toEqual([[at('02:00:01.000').toISOString(), at('02:00:04.000').toISOString(), 3000]]);
    const r = await t.call('GET', `/api/v1/instances/${ids['R']}`, { token: t.tokens.viewer });
    expect(r.body).toMatchObject({ startedAt: at('10:00:00.100').toISOString(), durationMs: 9 });
  });

  it('a FAILED instance with 3 attempts shows its last attempt started and its duration; each execution its own', async () => {
    const b = await t.call('GET', `/api/v1/instances/${ids['B']}`, { token: t.tokens.viewer });
    expect(b.body).toMatchObject({ state: 'FAILED', startedAt: at('05:02:00.300').toISOString(), endedAt: at('05:02:05.300').toISOString(), durationMs: 5000 });
    expect(b.body.executions.map((e: any) => e.durationMs)).toEqual([10_000, 20_000, 5000]);
  });

  it('a running instance started at its ACK, no duration yet; a pending one has none; lists carry the same fields', async () => {
    const run = await t.call('GET', `/api/v1/instances/${ids['RUN']}`, { token: t.tokens.viewer });
    expect(run.body).toMatchObject({ startedAt: at('12:00:00.600').toISOString(), endedAt: null, durationMs: null });
    const list = await t.call('GET', '/api/v1/instances?task=s_ok', { token: t.tokens.viewer });
    expect(list.body.items.map((i: any) => [i.id, i.startedAt, i.durationMs])).toEqual([
      [ids['P'], null, null],
      [ids['RUN'], at('12:00:00.600').toISOString(), null],
      [ids['A'], at('02:00:01.000').toISOString(), 3000],
    ]);
  });
});

describe('a disabled task has no next fire time', () => {
  it('disable → nextFireTime null (GET too); enable → a time again', async () => {
    await t.call('POST', '/api/v1/tasks', { token: t.tokens.operator, body: taskDef('nf_job', { schedule: { type: 'fixed_rate', everySeconds: 60 } }) });
    await t.pool.query("UPDATE task SET next_fire_time = NOW(3) + INTERVAL 1 HOUR WHERE name = 'nf_job'");
    expect((await t.call('GET', '/api/v1/tasks/nf_job', { token: t.tokens.viewer })).body.nextFireTime).toEqual(expect.any(String));
    const off = await t.call('POST', '/api/v1/tasks/nf_job/disable', { token: t.tokens.operator });
    expect(off.body).toMatchObject({ enabled: false, nextFireTime: null });
    expect((await t.call('GET', '/api/v1/tasks/nf_job', { token: t.tokens.viewer })).body.nextFireTime).toBeNull();
    const listed = await t.call('GET', '/api/v1/tasks?enabled=false', { token: t.tokens.viewer });
    expect(listed.body.items.map((x: any) => [x.name, x.nextFireTime])).toEqual([['nf_job', null]]);
    await t.pool.query("UPDATE task SET next_fire_time = NOW(3) + INTERVAL 1 HOUR WHERE name = 'nf_job'");
    const on = await t.call('POST', '/api/v1/tasks/nf_job/enable', { token: t.tokens.operator });
    expect(on.body).toMatchObject({ enabled: true });
    expect((await t.call('GET', '/api/v1/tasks/nf_job', { token: t.tokens.viewer })).body.nextFireTime).toEqual(expect.any(String));
  });
});

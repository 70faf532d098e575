/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-return, @typescript-eslint/no-unsafe-call --
   response bodies are untyped JSON here; the assertions check their shape. */
/**
 * `GET /tasks?q=` through task search's substring index (migration 0009, #24): another team's
 * tasks stay out of a search whatever the term, an edit made through the API is found at once,
 * and a task written without the index (the previous build during a rolling upgrade, R22) is
 * found once admin-api's sweep (task-text-sweep.ts) has passed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addToken, startTestApp, taskDef, type TestApp } from './harness.test-helper.js';
import { sweepTaskTexts } from './task-text-sweep.js';

let t: TestApp;
let viewerA: string;
const search = async (q: string, token?: string): Promise<string[]> => {
  const res = await t.call('GET', `/api/v1/tasks?q=${encodeURIComponent(q)}`, { token: token ?? t.tokens.viewer });
  expect(res.status).toBe(200);
  return res.body.items.map((task: any) => task.name);
};

beforeAll(async () => {
  t = await startTestApp();
  for (const name of ['team-a', 'team-b']) expect((await t.call('POST', '/api/v1/teams', { body: { name } })).status).toBe(201);
  viewerA = await addToken(t.pool, 'viewer-a', 'viewer', ['team-a']);
  const tasks: Array<[string, string, string]> = [
    ['sa_ledger', 'team-a', 'closes the ledger every night'],
    ['sb_ledger', 'team-b', 'closes the secret ledger of team b'],
    ['sb_payroll', 'team-b', 'pays everyone'],
  ];
  for (const [name, team, description] of tasks) {
    expect((await t.call('POST', '/api/v1/tasks', { token: t.tokens.operator, body: taskDef(name, { team, description }) })).status).toBe(201);
  }
});
afterAll(async () => {
  await t.close();
});

describe('GET /tasks?q= through the substring index', () => {
  it("never shows another team's task, whatever the term", async () => {
    expect(await search('ledger')).toEqual(['sa_ledger', 'sb_ledger']);
    expect(await search('ledger', viewerA)).toEqual(['sa_ledger']);
    for (const q of ['secret ledger', 'sb_', 'payroll', 'pays everyone', 'team b']) expect(await search(q, viewerA), q).toEqual([]);
  });

  it('finds an edit made through the API at once', async () => {
    const got = await t.call('GET', '/api/v1/tasks/sa_ledger', { token: t.tokens.viewer });
    const res = await t.call('PUT', '/api/v1/tasks/sa_ledger', {
      token: t.tokens.operator,
      body: { ...taskDef('sa_ledger', { team: 'team-a', description: 'balances the books at dawn' }), version: got.body.version },
    });
    expect(res.status).toBe(200);
    expect(await search('the books', viewerA)).toEqual(['sa_ledger']);
    expect(await search('every night', viewerA)).toEqual([]);
  });

  it('finds a task the previous build wrote once the sweep has passed (R22)', async () => {
    // The previous build writes the task row alone.
    await t.pool.query(
      `INSERT INTO task (name, team, description, schedule, schedule_type, exec, params, tags, retry, misfire)
       SELECT 'sa_old_build', team, 'written by the previous build', schedule, schedule_type, exec, params, tags, retry, misfire
         FROM task WHERE name = 'sa_ledger'`,
    );
    expect(await search('previous build', viewerA)).toEqual([]);
    expect(await sweepTaskTexts(t.pool)).toBe(1);
    expect(await search('previous build', viewerA)).toEqual(['sa_old_build']);
    expect(await sweepTaskTexts(t.pool)).toBe(0);
  });
});

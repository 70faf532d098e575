/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-return, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-call --
   response bodies are untyped JSON here; the assertions check their shape. */
/**
 * `GET /tasks` reads stored definitions without zod (#46): a row as the previous build wrote it
 * (fields added since missing, R22) is listed as a full read shows it, and a row that no longer
 * reads is left out, logged with its name, and the pages go on past it (before: the whole list
 * answered 500).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@ax/kit';
import { startTestApp, taskDef, type TestApp } from './harness.test-helper.js';

let t: TestApp;
const logged: string[] = [];
beforeAll(async () => {
  t = await startTestApp({ logger: createLogger({ service: 'admin-api', destination: { write: (line: string) => void logged.push(line) } }) });
  for (const name of ['tl_a', 'tl_b', 'tl_c', 'tl_d', 'tl_e']) {
    expect((await t.call('POST', '/api/v1/tasks', { token: t.tokens.operator, body: taskDef(name, { exec: { type: 'http', url: 'http://127.0.0.1:9/x' } }) })).status).toBe(201);
  }
});
afterAll(async () => {
  await t.close();
});

/** Every name listed through pages of `limit`, and the number of pages. */
async function allPages(limit: number): Promise<{ names: string[]; pages: number }> {
  const names: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const res = await t.call('GET', `/api/v1/tasks?q=tl_&limit=${limit}${cursor === null ? '' : `&cursor=${cursor}`}`, { token: t.tokens.viewer });
    expect(res.status).toBe(200);
    names.push(...res.body.items.map((task: any) => task.name));
    cursor = res.body.nextCursor;
    pages += 1;
  } while (cursor !== null && pages < 10);
  return { names, pages };
}

describe('GET /tasks on trusted reads (#46)', () => {
  it('lists a row of the previous build, without fields added since, as the full read shows it (R22)', async () => {
    await t.pool.query(`UPDATE task SET exec = JSON_REMOVE(exec, '$.method'), retry = JSON_REMOVE(retry, '$.jitterSeconds') WHERE name = 'tl_c'`);
    const listed = (await t.call('GET', '/api/v1/tasks?q=tl_c', { token: t.tokens.viewer })).body.items[0];
    const one = (await t.call('GET', '/api/v1/tasks/tl_c', { token: t.tokens.viewer })).body;
    expect(listed.exec).toEqual({ type: 'http', url: 'http://127.0.0.1:9/x', method: 'POST' });
    for (const field of ['exec', 'retry', 'misfire', 'schedule', 'tags', 'params']) expect(listed[field], field).toEqual(one[field]);
  });

  it('leaves an unreadable row out, logs its name, and pages on past it', async () => {
    await t.pool.query(`UPDATE task SET exec = '{"type":"ftp","host":"h"}' WHERE name = 'tl_b'`);
    for (const limit of [1, 2, 3, 50]) {
      const { names } = await allPages(limit);
      expect(names, `limit ${limit}`).toEqual(['tl_a', 'tl_c', 'tl_d', 'tl_e']);
    }
    const line = logged.map((l) => JSON.parse(l) as Record<string, any>).find((l) => l.task === 'tl_b');
    expect(line?.msg).toBe('a stored task cannot be read; it is left out of the list');
    expect(line?.err?.message).toMatch(/^task "tl_b": its stored definition cannot be read: .*exec/);
  });
});

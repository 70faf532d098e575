/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return --
   response bodies and result rows are untyped JSON here; the assertions check their shape. */
/**
 * Writes that race each other never answer 500 (#45, DESIGN §11 "Noisy neighbours"): concurrent
 * creations, edits and YAML imports deadlock on the search index's rows (`task_text_trigram`) and
 * InnoDB rolls one side back; the route's transaction runs again (write-transaction.ts), and only
 * when retries run out is the answer 503 with `Retry-After` — never a 500.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, taskDef, type TestApp } from './harness.test-helper.js';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
  for (let i = 0; i < 8; i++) {
    expect((await t.call('POST', '/api/v1/tasks', { token: t.tokens.operator, body: taskDef(`edit_${i}`, { description: `first text ${i}` }) })).status).toBe(201);
  }
});

afterAll(async () => {
  await t?.close();
});

const yamlOf = (name: string): string =>
  `name: ${name}\ndescription: imported ${name} with enough words to give it many trigrams\nschedule: {type: cron, expr: "0 3 * * *"}\nexec: {type: shell, command: [echo, hi]}\n`;

it('24 concurrent creations, edits and YAML imports see no 5xx, and every one of them lands', async () => {
  const creations = Array.from({ length: 8 }, (_, i) =>
    t.call('POST', '/api/v1/tasks', { token: t.tokens.operator, body: taskDef(`new_${i}`, { description: `created concurrently number ${i} of eight` }) }),
  );
  const edits = Array.from({ length: 8 }, (_, i) =>
    t.call('PUT', `/api/v1/tasks/edit_${i}`, { token: t.tokens.operator, body: { ...taskDef(`edit_${i}`, { description: `second text, edited concurrently ${i}` }), version: 1 } }),
  );
  const imports = Array.from({ length: 8 }, (_, i) =>
    t.call('POST', '/api/v1/tasks/import', { token: t.tokens.operator, raw: `${yamlOf(`imp_${i}_a`)}---\n${yamlOf(`imp_${i}_b`)}`, contentType: 'application/yaml' }),
  );
  const answers = await Promise.all([...creations, ...edits, ...imports]);
  const statuses = answers.map((a) => a.status);
  const failed = answers.filter((a) => a.status >= 500).map((a) => ({ status: a.status, body: a.body }));
  expect(failed).toEqual([]);
  expect(statuses).toEqual([...Array<number>(8).fill(201), ...Array<number>(16).fill(200)]);

  const [rows] = await t.pool.query<any[]>('SELECT name, description, version FROM task ORDER BY name');
  const byName = new Map(rows.map((r) => [String(r.name), r]));
  for (let i = 0; i < 8; i++) {
    expect(byName.get(`new_${i}`)?.description).toBe(`created concurrently number ${i} of eight`);
    expect(byName.get(`edit_${i}`)).toMatchObject({ description: `second text, edited concurrently ${i}` });
    expect(byName.has(`imp_${i}_a`) && byName.has(`imp_${i}_b`)).toBe(true);
  }
  // and search finds them: the index was written with each task, not lost to a retry
  const found = await t.call('GET', '/api/v1/tasks?q=edited%20concurrently&limit=500', { token: t.tokens.viewer });
  expect(found.body.items.map((x: any) => x.name).sort()).toEqual(Array.from({ length: 8 }, (_, i) => `edit_${i}`));
});

/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return --
   response bodies are untyped JSON here; the assertions check their shape. */
/**
 * Every request is refused or answered in bounded time (#45, DESIGN §11 "Noisy neighbours"): a
 * ~1 MiB YAML import of 116,000 tiny documents kept admin-api busy for 17–20 s and answered 500
 * (a stack overflow); it is refused with 413 naming the document limit, and another team's
 * reads go on meanwhile. Times are asserted loosely (seconds, not the milliseconds they take):
 * the point is that nothing waits for the whole file.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MAX_TASK_YAML_DOCUMENTS, MAX_TASK_YAML_ISSUES, TASK_YAML_MAX_DEPTH } from '@ax/core';
import { addToken, startTestApp, taskDef, type TestApp } from './harness.test-helper.js';

let t: TestApp;
let otherTeam: string;

beforeAll(async () => {
  t = await startTestApp();
  expect((await t.call('POST', '/api/v1/teams', { body: { name: 'quiet' } })).status).toBe(201);
  expect((await t.call('POST', '/api/v1/tasks', { body: taskDef('quiet_job', { team: 'quiet' }) })).status).toBe(201);
  otherTeam = await addToken(t.pool, 'quiet-viewer', 'viewer', ['quiet']);
});

afterAll(async () => {
  await t?.close();
});

const importYaml = (raw: string): Promise<{ status: number; body: any }> =>
  t.call('POST', '/api/v1/tasks/import', { token: t.tokens.operator, raw, contentType: 'application/yaml' });

it('a 1 MiB import of 116,000 documents is refused with 413 naming the limit, while another team\'s reads go on', async () => {
  const yaml = 'a: 1\n---\n'.repeat(116_000);
  expect(Buffer.byteLength(yaml)).toBeLessThanOrEqual(1_048_576);
  let importDone = false;
  const readLatenciesMs: number[] = [];
  const reads = (async () => {
    while (!importDone) {
      const started = performance.now();
      const res = await t.call('GET', '/api/v1/tasks', { token: otherTeam });
      readLatenciesMs.push(performance.now() - started);
      expect(res.status).toBe(200);
      expect(res.body.items.map((x: any) => x.name)).toEqual(['quiet_job']);
    }
  })();
  const started = performance.now();
  const res = await importYaml(yaml);
  const importMs = performance.now() - started;
  importDone = true;
  await reads;
  expect({ status: res.status, code: res.body.error?.code, details: res.body.error?.details }).toEqual({
    status: 413,
    code: 'PAYLOAD_TOO_LARGE',
    details: { limit: 'documents', max: MAX_TASK_YAML_DOCUMENTS },
  });
  expect(res.body.error.message).toContain(`more than ${MAX_TASK_YAML_DOCUMENTS} documents`);
  // loosely: it was 17–20 s; and no read waited for it
  expect(importMs).toBeLessThan(3_000);
  expect(readLatenciesMs.length).toBeGreaterThan(0);
  expect(Math.max(...readLatenciesMs)).toBeLessThan(3_000);
});

it('an import with thousands of issues answers 400 with the first ones and says the rest were left out', async () => {
  const res = await importYaml('- not a task\n---\n'.repeat(1_500));
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe('VALIDATION_FAILED');
  expect(res.body.error.details.issues).toHaveLength(MAX_TASK_YAML_ISSUES + 1);
  expect(res.body.error.details.issues.at(-1).message).toBe(`more issues not shown: only the first ${MAX_TASK_YAML_ISSUES} are reported`);
});

it('a document nested deeper than the limit answers 400 naming it', async () => {
  const res = await importYaml(`name: deep\nparams: ${'['.repeat(200_000)}${']'.repeat(200_000)}\n`);
  expect(res.status).toBe(400);
  expect(res.body.error.details.issues[0].message).toContain(`nested deeper than ${TASK_YAML_MAX_DEPTH} levels, the limit`);
});

it('a body over the size limit answers 413 before it is read whole', async () => {
  const res = await importYaml(`# ${'x'.repeat(1_048_576)}\n`);
  expect(res.status).toBe(413);
  expect(res.body.error.code).toBe('PAYLOAD_TOO_LARGE');
  const json = await t.call('POST', '/api/v1/tasks', { token: t.tokens.operator, raw: `{"name":"x","description":"${'x'.repeat(1_048_576)}"}` });
  expect(json.status).toBe(413);
});

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
import { JSON_BODY_LIMITS, MAX_CALENDAR_DATES, MAX_JSON_DEPTH, MAX_REPORTED_ISSUES, MAX_TASK_YAML_DOCUMENTS, MAX_TASK_YAML_ISSUES, TASK_YAML_MAX_DEPTH } from '@ax/core';
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

/**
 * JSON bodies (#45): `exec.command` with 300,000 numbers kept `parseTaskDefinition` busy ~18 s
 * (38 s on a loaded machine) and produced 300,000 issues. Each body below is refused before
 * validation with 400 and one issue naming the cap, while another team's reads go on.
 */
const postTaskRaw = (raw: string): Promise<{ status: number; body: any }> => t.call('POST', '/api/v1/tasks', { token: t.tokens.operator, raw });

/** `body` (JSON text, ~1 MiB) sent while another team's token keeps listing its tasks; the answer, how long it took, and the slowest read. */
async function sendWhileOthersRead(send: () => Promise<{ status: number; body: any }>): Promise<{ res: { status: number; body: any }; ms: number; slowestReadMs: number }> {
  let done = false;
  const readLatenciesMs: number[] = [];
  const reads = (async () => {
    while (!done) {
      const started = performance.now();
      const res = await t.call('GET', '/api/v1/tasks', { token: otherTeam });
      readLatenciesMs.push(performance.now() - started);
      expect(res.status).toBe(200);
    }
  })();
  const started = performance.now();
  const res = await send();
  const ms = performance.now() - started;
  done = true;
  await reads;
  expect(readLatenciesMs.length).toBeGreaterThan(0);
  return { res, ms, slowestReadMs: Math.max(...readLatenciesMs) };
}

const numbers = (n: number): string => Array.from({ length: n }, (_, i) => String(i % 10)).join(',');

it.each([
  {
    what: 'an array of 300,000 numbers in exec.command',
    raw: () => `{"name":"big","schedule":{"type":"cron","expr":"0 2 * * *"},"exec":{"type":"shell","command":[${numbers(300_000)}]}}`,
    limit: 'arrayLength',
    max: JSON_BODY_LIMITS.arrayLength,
    message: `exec.command: an array of more than ${JSON_BODY_LIMITS.arrayLength} items`,
  },
  {
    what: 'an object of 80,000 keys in params',
    raw: () => `{"name":"big","params":{${Array.from({ length: 80_000 }, (_, i) => `"k${i}":1`).join(',')}}}`,
    limit: 'objectKeys',
    max: JSON_BODY_LIMITS.objectKeys,
    message: `params: an object of more than ${JSON_BODY_LIMITS.objectKeys} keys`,
  },
  {
    what: '400 arrays of 1,000 numbers (400,000 values) in params',
    raw: () => `{"name":"big","params":{${Array.from({ length: 400 }, (_, i) => `"k${i}":[${numbers(1_000)}]`).join(',')}}}`,
    limit: 'nodes',
    max: JSON_BODY_LIMITS.nodes,
    message: `more than ${JSON_BODY_LIMITS.nodes} values in all`,
  },
])('a ~1 MiB JSON task body with $what is refused with 400 naming the limit, quickly, while another team\'s reads go on', async ({ raw, limit, max, message }) => {
  const text = raw();
  expect(Buffer.byteLength(text)).toBeGreaterThan(500_000);
  expect(Buffer.byteLength(text)).toBeLessThanOrEqual(1_048_576);
  const { res, ms, slowestReadMs } = await sendWhileOthersRead(() => postTaskRaw(text));
  expect({ status: res.status, code: res.body.error?.code, limit: res.body.error?.details?.limit, max: res.body.error?.details?.max }).toEqual({
    status: 400,
    code: 'VALIDATION_FAILED',
    limit,
    max,
  });
  expect(res.body.error.message).toContain(message);
  expect(res.body.error.details.issues).toHaveLength(1);
  expect(res.body.error.details.issues[0].message).toContain(message);
  // loosely: it was ~18 s
  expect(ms).toBeLessThan(3_000);
  expect(slowestReadMs).toBeLessThan(3_000);
});

it('a JSON task body nested 100,000 levels deep answers 400 naming the depth limit, quickly', async () => {
  const text = `{"name":"deep","params":{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}}`;
  const { res, ms } = await sendWhileOthersRead(() => postTaskRaw(text));
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe('VALIDATION_FAILED');
  expect(res.body.error.details).toMatchObject({ limit: 'depth', max: MAX_JSON_DEPTH });
  expect(res.body.error.details.issues[0].message).toContain(`nested deeper than ${MAX_JSON_DEPTH} levels`);
  expect(ms).toBeLessThan(3_000);
});

it('a calendar body of 70,000 dates (~1 MiB) is refused with 400 naming the limit; one of the most dates a calendar holds is accepted', async () => {
  const many = JSON.stringify({ team: 'quiet', dates: Array.from({ length: 70_000 }, () => '2026-01-01') });
  expect(Buffer.byteLength(many)).toBeLessThanOrEqual(1_048_576);
  const { res } = await sendWhileOthersRead(() => t.call('PUT', '/api/v1/calendars/huge', { token: t.tokens.operator, raw: many }));
  expect({ status: res.status, code: res.body.error?.code, limit: res.body.error?.details?.limit }).toEqual({ status: 400, code: 'VALIDATION_FAILED', limit: 'arrayLength' });
  expect(res.body.error.message).toContain('dates: an array of more than');

  const day0 = Date.UTC(2000, 0, 1);
  const dates = Array.from({ length: MAX_CALENDAR_DATES }, (_, i) => new Date(day0 + i * 86_400_000).toISOString().slice(0, 10));
  const ok = await t.call('PUT', '/api/v1/calendars/full', { token: t.tokens.operator, body: { team: 'quiet', dates } });
  expect(ok.status).toBe(200);
  expect(ok.body.dates).toHaveLength(MAX_CALENDAR_DATES);
});

it('a JSON body with thousands of issues answers 400 with the first ones and says the rest were left out', async () => {
  const res = await postTaskRaw(`{"name":"many","schedule":{"type":"cron","expr":"0 2 * * *"},"exec":{"type":"shell","command":[${numbers(5_000)}]}}`);
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe('VALIDATION_FAILED');
  expect(res.body.error.details.issues).toHaveLength(MAX_REPORTED_ISSUES + 1);
  expect(res.body.error.details.issues[0].path).toBe('exec.command[0]');
  expect(res.body.error.details.issues.at(-1).message).toBe(`more issues not shown: only the first ${MAX_REPORTED_ISSUES} are reported`);
});

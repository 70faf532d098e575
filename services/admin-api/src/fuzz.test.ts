/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-member-access --
   response bodies and result rows are untyped JSON here; the assertions check their shape. */
/**
 * 1,000 random and malformed bodies across the write endpoints (wrong types, deep nesting, huge
 * strings, `__proto__` keys, YAML alias bombs): never a 5xx, always the error shape, and nothing
 * written (row counts of every table unchanged). Seeded, so a failure reproduces.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, taskDef, type TestApp } from './harness.test-helper.js';

let t: TestApp;
const TABLES = ['task', 'task_edge', 'task_instance', 'task_execution', 'event_log', 'audit_log', 'api_token', 'rerun_batch', 'trigger_idempotency', 'execution_claim', 'system_flag'];

beforeAll(async () => {
  t = await startTestApp();
  await t.call('POST', '/api/v1/tasks', { token: t.tokens.operator, body: taskDef('fz_a') });
  await t.call('POST', '/api/v1/tasks', { token: t.tokens.operator, body: taskDef('fz_b') });
});
afterAll(async () => {
  await t?.close();
});

async function counts(): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of TABLES) {
    const [rows] = await t.pool.query<any[]>(`SELECT COUNT(*) AS n FROM ${table}`);
    out[table] = Number(rows[0].n);
  }
  return out;
}

/** mulberry32 */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

const rnd = prng(0xa11ce);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;

function deep(depth: number): unknown {
  let v: unknown = 'leaf';
  for (let i = 0; i < depth; i++) v = rnd() < 0.5 ? [v] : { k: v };
  return v;
}

/** A value of a random kind, often of the wrong type. */
function junk(level = 0): unknown {
  const kinds = ['null', 'num', 'neg', 'float', 'bool', 'str', 'huge', 'arr', 'obj', 'deep', 'proto', 'unicode', 'sql'];
  switch (pick(kinds)) {
    case 'null':
      return null;
    case 'num':
      return Math.floor(rnd() * 1e12);
    case 'neg':
      return -Math.floor(rnd() * 1000) - 1;
    case 'float':
      return rnd() * 1e308 * (rnd() < 0.5 ? -1 : 1);
    case 'bool':
      return rnd() < 0.5;
    case 'str':
      return Math.random().toString(36).slice(2);
    case 'huge':
      return 'x'.repeat(Math.floor(rnd() * 300_000));
    case 'arr':
      return level > 3 ? [] : Array.from({ length: Math.floor(rnd() * 4) }, () => junk(level + 1));
    case 'obj':
      return level > 3 ? {} : Object.fromEntries(Array.from({ length: Math.floor(rnd() * 4) }, (_, i) => [`k${i}`, junk(level + 1)]));
    case 'deep':
      return deep(30 + Math.floor(rnd() * 200));
    case 'proto':
      return JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as unknown;
    case 'unicode':
      return '\u0000\ud800💥\u202e';
    default:
      return "x'; DROP TABLE task; --";
  }
}

/** A template with a guaranteed-invalid field plus random mutations. */
function mutate(template: Record<string, unknown>, mustBreak: string, breakers: readonly unknown[]): Record<string, unknown> {
  const out: Record<string, unknown> = { ...template };
  out[mustBreak] = pick(breakers);
  const keys = Object.keys(template);
  const n = Math.floor(rnd() * 3);
  for (let i = 0; i < n; i++) {
    const action = rnd();
    const key = pick(keys);
    if (key === mustBreak) continue;
    if (action < 0.4) out[key] = junk();
    else if (action < 0.6) delete out[key];
    else if (action < 0.8) out[`extra_${i}`] = junk();
    else Object.defineProperty(out, '__proto__', { value: junk(), enumerable: true, configurable: true, writable: true });
  }
  return out;
}

const BAD_NAMES = [null, 42, '', 'Bad Name', 'x'.repeat(300), ['fz_a'], { n: 1 }, '../etc', 'UPPER'];
const task = taskDef('fz_new', { tags: ['a'], priority: 3, retry: { max: 1 }, params: { p: 1 } });

interface Case {
  method: string;
  path: string;
  raw: string | Buffer;
  contentType?: string;
  token?: string;
}

function jsonCase(method: string, path: string, body: unknown): Case {
  return { method, path, raw: rnd() < 0.05 ? Buffer.from(String(JSON.stringify(body)).slice(0, -1)) : JSON.stringify(body) };
}

function yamlBomb(): string {
  const lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
  const names = 'bcdefghij'.split('');
  let prev = 'a';
  for (const n of names) {
    lines.push(`${n}: &${n} [*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev}]`);
    prev = n;
  }
  lines.push(`name: bomb\nschedule: {type: none}\nexec: {type: shell, command: [x]}\nparams: {p: *${prev}}`);
  return lines.join('\n');
}

function randomCase(): Case {
  const kind = Math.floor(rnd() * 9);
  switch (kind) {
    case 0:
      return jsonCase('POST', '/api/v1/tasks', rnd() < 0.2 ? junk() : mutate(task, 'name', BAD_NAMES));
    case 1:
      return jsonCase('PUT', '/api/v1/tasks/fz_a', mutate({ ...taskDef('fz_a'), version: 1 }, pick(['version', 'schedule', 'exec']), [null, 'one', -1, 1.5, { type: 'cron', expr: '99 * * * *' }, { type: 'telnet' }, []]));
    case 2:
      return jsonCase('POST', '/api/v1/edges', mutate({ parent: 'fz_a', child: 'fz_b', rule: 'ALL_DONE' }, pick(['parent', 'child', 'rule']), [null, 7, '', 'Bad Name', 'SOMETIMES', ['fz_a'], { x: 1 }]));
    case 3:
      return jsonCase('POST', '/api/v1/reruns', mutate({ mode: pick(['instance', 'dag', 'failed', 'backfill']), instanceId: '1', root: 'fz_a', task: 'fz_a', bizDate: '2026-11-01', from: '2026-11-01', to: '2026-11-02', reason: 'r' }, pick(['mode', 'reason']), [null, 5, '', '   ', ['x'], { mode: 'dag' }, 'x'.repeat(5000)]));
    case 4:
      return jsonCase('POST', '/api/v1/tokens', mutate({ name: 'n', role: 'viewer' }, pick(['name', 'role']), [null, 1, '', ['admin'], { r: 1 }, 'x'.repeat(500)]));
    case 5:
      return jsonCase('POST', '/api/v1/tasks/fz_a/trigger', mutate({ params: { a: 1 }, bizDate: '2026-11-01' }, pick(['params', 'bizDate']), [null, 1, 'x', ['a'], '2026-13-45', deep(60)]));
    case 6: {
      const yamls = [yamlBomb(), 'name: [unclosed', '- just\n- a list', 'name: fz_y\nschedule: {type: cron, expr: nope}\nexec: {type: shell, command: [x]}', '&a [*a]', '\t\tbad: indent:', `name: ${'y'.repeat(200)}`, '{"__proto__": {"x": 1}, "name": "fz_z"}'];
      return { method: 'POST', path: '/api/v1/tasks/import', raw: pick(yamls), contentType: 'application/yaml' };
    }
    case 7: {
      const bodies = ['', '{', 'null', '[]', '"str"', '1e999', '{"a":', 'x'.repeat(1_100_000), '\u0000'];
      return { method: pick(['POST', 'PUT']), path: pick(['/api/v1/tasks', '/api/v1/tasks/fz_a', '/api/v1/edges', '/api/v1/reruns', '/api/v1/tokens']), raw: pick(bodies), ...(rnd() < 0.3 ? { contentType: pick(['text/plain', 'application/xml', 'multipart/form-data']) } : {}) };
    }
    default:
      return jsonCase('POST', pick(['/api/v1/executions/nope/report', '/api/v1/executions/nope/claim']), junk());
  }
}

it('1,000 malformed bodies: no 5xx, the error shape, nothing written', async () => {
  const before = await counts();
  const statuses = new Map<number, number>();
  for (let i = 0; i < 1000; i++) {
    const c = randomCase();
    const operatorOrAdmin = c.path.includes('/tokens') ? t.tokens.admin : t.tokens.operator;
    const res = await t.call(c.method, c.path, { token: operatorOrAdmin, raw: c.raw, ...(c.contentType ? { contentType: c.contentType } : {}) });
    statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    if (res.status >= 500 || res.status < 400) {
      throw new Error(`case ${i} ${c.method} ${c.path} → ${res.status} ${JSON.stringify(res.body).slice(0, 300)} body: ${String(c.raw).slice(0, 300)}`);
    }
    expect(res.body.error.code).toMatch(/^[A-Z_]+$/);
    expect(JSON.stringify(res.body)).not.toMatch(/\n\s+at |ER_[A-Z_]+|SELECT |INSERT /);
  }
  expect(await counts()).toEqual(before);
  expect(statuses.get(400)).toBeGreaterThan(500);
  expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
}, 120_000);

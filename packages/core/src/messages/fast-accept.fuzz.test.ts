import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { isStructureSound } from '../task/json-guard.js';
import { MAX_MESSAGE_DEPTH, parseMessage, parseMessageStrict, type ParsedMessage } from './codec.js';
import { fastAcceptMessage } from './fast-accept.js';

/**
 * Mutation fuzzing: random valid messages of the fast-path kinds, broken (or not) by one to three
 * random mutations, must get the same outcome from `parseMessage` as from zod alone
 * (`parseMessageStrict`): same ok flag, same reason, same message with keys in the same order.
 * Seeded, so a failure reproduces; the seed and the body are printed with it.
 */

const SEED = 0x5eed_a7;
const CASES = 5_000;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Obj = { [key: string]: Json };

/** mulberry32: a small seeded PRNG. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

function makeRandom(seed: number) {
  const next = prng(seed);
  const int = (n: number): number => Math.floor(next() * n);
  const pick = <T>(values: readonly T[]): T => values[int(values.length)] as T;
  const chance = (p: number): boolean => next() < p;
  return { int, pick, chance };
}
type Random = ReturnType<typeof makeRandom>;

/** A number written into the JSON text as is (`1e400` parses to Infinity, `-0` to -0). */
const raw = (text: string): string => `@@RAW@@${text}@@`;
const RAW_TOKEN = /"@@RAW@@([^@]*)@@"/g;

const nested = (depth: number): Json => (depth === 0 ? 'leaf' : { n: nested(depth - 1) });
const nestedArray = (depth: number): Json => (depth === 0 ? [] : [nestedArray(depth - 1)]);

/** Values a mutation may put anywhere: wrong types, boundaries, near-miss formats, other enums. */
const INTERESTING: readonly Json[] = [
  null, true, false, 0, -1, 1, 2, 9, 10, 1.5, -0.5, 9_007_199_254_740_991, 9_007_199_254_740_992, 1e21,
  raw('1e400'), raw('-1e400'), raw('-0'), raw('1.0'), raw('5e0'), raw('1E2'),
  '', ' ', 'x', '1', 'a'.repeat(128), 'a'.repeat(129), '😀'.repeat(64), '😀'.repeat(65), 'd'.repeat(1_000), 'd'.repeat(1_001),
  'e'.repeat(4_096), 'e'.repeat(4_097), 'é'.repeat(32_768), 'é'.repeat(32_769),
  [], [1], ['x'], [''], {}, { a: 1 }, { secretRef: 'TOKEN' }, { secretRef: '1BAD' }, { secretRef: 'A', x: 1 },
  '2026-12-01', '2024-02-29', '2026-02-29', '2026-13-01', '2026-12-01T02:00:00Z', '2026-12-01T02:00:00.5+05:30',
  '2026-12-01T24:00:00Z', '2026-12-01T02:00Z', '2026-12-01 02:00:00Z', '2026-12-01T02:00:00+24:00',
  'SUCCESS', 'FAILED', 'TIMEOUT', 'success', 'EXPIRED', 'DUPLICATE', 'BORED', 'worker', 'report',
  'shell', 'http', 'plugin', 'GET', 'get', 'PATCH', 'HEAD',
  'http://orders.internal/x', 'https://a.b:8443/p?q=1', 'HTTP://X.Y/', 'http:x', 'http:/x', 'ftp://x/', 'https://', 'http://a b/',
  ' http://x/', 'http://x/\n', 'http://[::1]:80/', 'http://x:99999/',
  'archive_files', '../etc', 'a'.repeat(129), '-x', 'TOKEN', 'A_1', '1A', 'A-B', 'content-type', 'Idempotency-Key', 'X Y', 'X-Ok',
  '{{bizDate}}', '{{ expectedTime }}', '{{params.a.b}}', '{{bizdate}}', '{{params}}', 'a{{b}}c', '{{{x}}}', '{{',
  nested(30), nested(36), nested(37), nested(40), nestedArray(36), nestedArray(37),
];

/** Keys a mutation may add: unknown ones, known ones of other shapes, "__proto__", record keys. */
const EXTRA_KEYS = [
  'extra', 'futureField', '__proto__', 'type', 'shell', 'env', 'headers', 'config', 'origin', 'async', 'shardIndex', 'shardTotal', 'v', 'kind',
  'content-type', 'X-AX-Worker', 'X Y', 'X-Ok', '1ENV', 'OK_ENV', '',
];

const MAX_INT = Number.MAX_SAFE_INTEGER;
const COUNT_EDGES: readonly Json[] = [0, 1, 2, MAX_INT, MAX_INT + 1, 1.5, raw('1e2'), raw('1.0')];
const ID_EDGES: readonly Json[] = ['', 'x', 'a'.repeat(128), 'a'.repeat(129), '😀'.repeat(64), '😀'.repeat(65), '😀'.repeat(128), '😀'.repeat(129)];
const INSTANT_EDGES: readonly Json[] = [
  '2026-12-01T02:00:00Z', '2026-12-01T02:00:00.123456789-23:59', '2024-02-29T00:00:00Z', '2026-02-29T00:00:00Z', '2026-12-01T02:00:00',
  '2026-12-01T02:00Z', '2026-12-01t02:00:00z', '2026-12-01T02:00:60Z', '2026-12-01T02:00:00+0100', '2026-12-01',
];
const DEEP_EDGES: readonly Json[] = [nested(36), nested(37), nested(38), nested(39), { a: nestedArray(37) }];

/** Boundary values per field name: the last valid value and the first invalid one, where there is one. */
const FIELD_EDGES: Readonly<Record<string, readonly Json[]>> = {
  v: [1, 2, raw('1.0'), raw('1e0')],
  kind: ['dispatch', 'result', 'ack', 'refusal', 'cancel'],
  workerId: ID_EDGES, executionId: ID_EDGES, instanceId: ID_EDGES, taskId: ID_EDGES,
  taskName: ['', ' ', '😀'], traceId: ['', 'x'], idempotencyKey: ['', 'k'],
  expectedTime: INSTANT_EDGES, ackDeadline: INSTANT_EDGES, at: INSTANT_EDGES, startedAt: INSTANT_EDGES, endedAt: INSTANT_EDGES,
  bizDate: ['2024-02-29', '2026-02-29', '2026-12-31', '2026-12-32', '2026-1-01', '2026-12-01T00:00:00Z'],
  attempt: COUNT_EDGES, maxAttempts: COUNT_EDGES, runNo: COUNT_EDGES, timeoutSeconds: COUNT_EDGES,
  priority: [0, 9, 10, -1, 8.5, raw('-0')],
  shardIndex: [0, 1, 2, 3, -1], shardTotal: [0, 1, 2, 3, 4],
  params: [{}, [], null, ...DEEP_EDGES],
  items: [[], {}, null, 'x'],
  outcome: ['SUCCESS', 'FAILED', 'TIMEOUT', 'CANCELED', 'WORKER_RESTART', 'success'],
  reason: ['EXPIRED', 'CLOCK_SKEW', 'SHUTTING_DOWN', 'DUPLICATE', 'RECALLED', 'expired'],
  origin: ['worker', 'report', 'admin', null],
  exitCode: [null, -1, 0, 255, 0.5, MAX_INT + 1, raw('-0'), raw('1e400')],
  async: [true, false, 'true', null], outputTruncated: [true, false, 0],
  outputTail: ['', '€'.repeat(21_845), '€'.repeat(21_846), 'é'.repeat(32_768), 'é'.repeat(32_769), '😀'.repeat(16_384), '😀'.repeat(16_385)],
  error: ['', 'e'.repeat(4_096), 'e'.repeat(4_097), '😀'.repeat(4_096), '😀'.repeat(4_097)],
  detail: ['', 'd'.repeat(1_000), 'd'.repeat(1_001), '😀'.repeat(1_000), '😀'.repeat(1_001)],
  type: ['shell', 'http', 'plugin', 'Shell'],
  command: [[], [''], ['', 'x'], ['x', ''], ['{{bizdate}}'], ['{{ bizDate }}', '{{params.a-b.c_d}}'], [1], 'true'],
  cwd: ['', '/', 1], shell: [true, false, 'false', null],
  env: [{}, [], null, { '1A': 'x' }, { A: { secretRef: 'B' } }, { A: { secretRef: 'B', x: 1 } }, { A: 1 }, { '': 'x' }],
  headers: [{}, { 'content-type': 'x' }, { 'X-AX-Signature': 'x' }, { 'X Y': 'x' }, { 'X-Ok': { secretRef: 'T' } }, { 'X-Ok': { secretRef: '1T' } }, { 'X-Ok': null }],
  secretRef: ['TOKEN', '_', '1A', 'A-B', '', 5],
  url: ['http://x/', 'https://x:1/', 'HTTPS://X/', 'http:x', 'http:/x', 'ftp://x/', 'https://', 'http://a b/', ' http://x/', 'http://x/\t', 'http://x:65536/', 'http://[::1]/'],
  method: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'get', 'HEAD'],
  name: ['archive_files', 'a'.repeat(128), 'a'.repeat(129), '.x', 'x.', '../x', ''],
  config: [{}, [], null, { a: '{{bizdate}}' }, { a: ['{{params.x}}', { b: '{{nope}}' }] }, ...DEEP_EDGES],
  dir: ['{{bizdate}}', '{{params}}', '{{ params.a }}'],
  outputInResult: [true, false, 'true', null],
  printedNothing: [true, false, 1],
  chunks: [[], {}, null, Array.from({ length: 64 }, () => ({ stream: 'stdout', offset: 0, allOffset: 0, data: 'eA==' })), Array.from({ length: 65 }, () => ({ stream: 'stdout', offset: 0, allOffset: 0, data: 'eA==' }))],
  stream: ['stdout', 'stderr', 'STDOUT', 'all', null],
  offset: COUNT_EDGES, allOffset: COUNT_EDGES, stdoutBytes: COUNT_EDGES, stderrBytes: COUNT_EDGES,
  truncated: [true, false, 0, null],
  data: [{}, [], null, ...DEEP_EDGES, '', '=', '==', 'eA', 'eA=', 'eA==', 'e A=', 'eA===', 'x'.repeat(10_924), 'x'.repeat(10_925), 'A'.repeat(10_920) + '====', Buffer.alloc(8_192).toString('base64'), Buffer.alloc(8_193).toString('base64')],
};

const AT = '2026-12-01T02:00:01.000Z';

function validExec(r: Random): Obj {
  switch (r.int(3)) {
    case 0: {
      const exec: Obj = { type: 'shell', command: r.pick([['true'], ['python3', 'run.py', '{{bizDate}}'], ['sh', '{{ params.x }}', '']]) };
      if (r.chance(0.5)) exec.env = { TOKEN: { secretRef: 'API_TOKEN' }, MODE: 'batch' };
      if (r.chance(0.3)) exec.cwd = '/srv';
      if (r.chance(0.5)) exec.shell = r.chance(0.5);
      return exec;
    }
    case 1: {
      const exec: Obj = { type: 'http', url: r.pick(['http://orders.internal:8080/ax/job', 'https://a.example/x?y=1']) };
      if (r.chance(0.5)) exec.method = r.pick(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);
      if (r.chance(0.5)) exec.headers = { 'X-Team': 'orders', Authorization: { secretRef: 'ORDERS_TOKEN' } };
      return exec;
    }
    default: {
      const exec: Obj = { type: 'plugin', name: 'archive_files' };
      if (r.chance(0.6)) exec.config = { dir: '/data/{{bizDate}}', keep: [30, { deep: true }] };
      return exec;
    }
  }
}

function validItem(kind: string, r: Random, n: number): Obj {
  const ids = { executionId: `0193a1b2-0000-7000-8000-00000000000${n}`, instanceId: String(100 + n) };
  switch (kind) {
    case 'dispatch': {
      const item: Obj = {
        ...ids,
        taskName: 'order_stat',
        taskId: '7',
        expectedTime: '2026-12-01T02:00:00.000Z',
        bizDate: '2026-12-01',
        attempt: 1 + r.int(3),
        maxAttempts: 3,
        runNo: 1,
        priority: r.int(10),
        params: r.pick<Json>([{}, { source: 'orders' }, { a: { b: [1, 'x', null] } }]),
        exec: validExec(r),
        timeoutSeconds: 120,
        ackDeadline: '2026-12-01T02:00:05.000+00:00',
        traceId: 'trace-1',
        idempotencyKey: 'order_stat:2026-12-01T02:00:00.000Z:1',
      };
      if (r.chance(0.5)) item.outputInResult = r.chance(0.8);
      if (r.chance(0.3)) {
        const shardIndex = r.int(3);
        Object.assign(item, { shardIndex, shardTotal: shardIndex + 1 + r.int(2) });
      }
      return item;
    }
    case 'result': {
      const item: Obj = { ...ids, outcome: r.pick(['SUCCESS', 'FAILED', 'TIMEOUT', 'CANCELED', 'WORKER_RESTART']), endedAt: AT };
      if (r.chance(0.5)) item.exitCode = r.pick([0, 1, -9, null]);
      if (r.chance(0.5)) item.outputTail = 'line\n';
      if (r.chance(0.3)) item.outputTruncated = r.chance(0.5);
      if (r.chance(0.3)) item.error = 'exit code 1';
      if (r.chance(0.3)) item.data = { rows: 3 };
      if (r.chance(0.5)) item.startedAt = AT;
      if (r.chance(0.3) && item.outcome === 'SUCCESS') item.async = true;
      if (r.chance(0.2)) item.printedNothing = true;
      else if (r.chance(0.4)) {
        item.output = {
          chunks: Array.from({ length: r.int(3) }, (_, i) => ({ stream: r.pick(['stdout', 'stderr']), offset: i * 4, allOffset: i * 4, data: r.pick(['eA==', 'b2sK', Buffer.alloc(3_000, i).toString('base64')]) })),
          stdoutBytes: 12,
          stderrBytes: r.int(2),
          truncated: r.chance(0.2),
        };
      }
      return item;
    }
    case 'ack':
      return { ...ids, at: AT };
    default: {
      const item: Obj = { ...ids, reason: r.pick(['EXPIRED', 'CLOCK_SKEW', 'SHUTTING_DOWN', 'DUPLICATE', 'RECALLED']) };
      if (r.chance(0.5)) item.at = AT;
      if (r.chance(0.5)) item.detail = 'offset 2300 ms';
      return item;
    }
  }
}

function validMessage(r: Random): Obj {
  const kind = r.pick(['dispatch', 'result', 'ack', 'refusal']);
  const body: Obj = { v: 1, kind, workerId: 'w1', items: Array.from({ length: 1 + r.int(3) }, (_, n) => validItem(kind, r, n)) };
  if (kind === 'result' && r.chance(0.5)) body.origin = r.pick(['worker', 'report']);
  return body;
}

/** Every container and key/index of `value` below the root, for a mutation to pick from. */
function slots(value: Json, out: Array<{ parent: Obj | Json[]; key: string | number }> = []) {
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      out.push({ parent: value, key: i });
      slots(item, out);
    });
  } else if (value !== null && typeof value === 'object') {
    for (const key of Object.keys(value)) {
      out.push({ parent: value, key });
      slots(value[key] as Json, out);
    }
  }
  return out;
}

function setOwn(target: Obj, key: string, value: Json): void {
  // defineProperty: a plain assignment to "__proto__" would set the prototype instead of a key.
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function mutate(body: Obj, r: Random): void {
  const all = slots(body);
  const known = all.filter((slot) => typeof slot.key === 'string' && Object.hasOwn(FIELD_EDGES, slot.key));
  const { parent, key } = r.pick(all);
  const current = (parent as Record<string | number, Json>)[key] as Json;
  switch (r.int(9)) {
    case 0: // delete a field or an item
      if (Array.isArray(parent)) parent.splice(key as number, 1);
      else delete parent[key as string];
      return;
    case 1: // add a key to the containing object (or to the value when it is one)
      setOwn(current !== null && typeof current === 'object' && !Array.isArray(current) ? current : Array.isArray(parent) ? body : parent, r.pick(EXTRA_KEYS), r.pick(INTERESTING));
      return;
    case 2: // a numeric neighbour of a number, a float, a negative
      if (typeof current === 'number') {
        (parent as Record<string | number, Json>)[key] = r.pick([current + 1, current - 1, -current, current + 0.5, current * 1e16]);
        return;
      }
      break;
    case 3: // a near-miss of a string
      if (typeof current === 'string') {
        (parent as Record<string | number, Json>)[key] = r.pick([
          '', ` ${current}`, `${current} `, current.toUpperCase(), current.toLowerCase(), current.slice(1), `${current}{{x}}`, `${current}😀`, current.repeat(40),
        ]);
        return;
      }
      break;
    case 4: // a container where a scalar was, or the reverse
      (parent as Record<string | number, Json>)[key] = r.pick([[current], { value: current }, JSON.stringify(current) ?? null]);
      return;
    case 5:
    case 6:
    case 7: // a boundary value of a known field
      if (known.length > 0) {
        // Field name first, so that rare fields (shards, async) are hit as often as common ones.
        const name = r.pick([...new Set(known.map((slot) => slot.key))]);
        const slot = r.pick(known.filter((candidate) => candidate.key === name));
        (slot.parent as Obj)[slot.key as string] = r.pick(FIELD_EDGES[slot.key as string] as readonly Json[]);
        return;
      }
      break;
  }
  (parent as Record<string | number, Json>)[key] = r.pick(INTERESTING);
}

/**
 * Valid bodies with every optional field present (and a few with the alternatives: failed
 * outcome, each exec type), for the boundary sweep to vary one field at a time.
 */
const FULL_BASES: readonly Obj[] = (() => {
  const dispatchItem = (exec: Obj): Obj => ({
    executionId: 'e1', instanceId: '1', taskName: 't', taskId: '7', expectedTime: AT, bizDate: '2026-12-01', attempt: 1, maxAttempts: 3,
    runNo: 1, priority: 9, params: { a: 1 }, exec, timeoutSeconds: 120, ackDeadline: AT, traceId: 'tr', shardIndex: 1, shardTotal: 2, idempotencyKey: 'k', outputInResult: true,
  });
  const dispatch = (exec: Obj): Obj => ({ v: 1, kind: 'dispatch', workerId: 'w1', items: [dispatchItem(exec)] });
  const result = (item: Obj): Obj => ({ v: 1, kind: 'result', workerId: 'w1', origin: 'report', items: [item] });
  const full = { executionId: 'e1', instanceId: '1', exitCode: 0, outputTail: 't', outputTruncated: false, error: 'x', data: { a: 1 }, startedAt: AT, endedAt: AT };
  const output = { chunks: [{ stream: 'stdout', offset: 0, allOffset: 0, data: 'eA==' }, { stream: 'stderr', offset: 0, allOffset: 1, data: 'b2sK' }], stdoutBytes: 1, stderrBytes: 3, truncated: false };
  return [
    dispatch({ type: 'shell', command: ['run', '{{bizDate}}'], env: { A: 'x', B: { secretRef: 'T' } }, cwd: '/srv', shell: true }),
    dispatch({ type: 'http', url: 'http://x/', method: 'GET', headers: { 'X-A': 'x', 'X-B': { secretRef: 'T' } } }),
    dispatch({ type: 'plugin', name: 'p', config: { dir: '/d/{{bizDate}}', list: ['{{params.a}}'] } }),
    result({ ...full, outcome: 'SUCCESS', async: true }),
    result({ ...full, outcome: 'FAILED', exitCode: null, async: false }),
    result({ ...full, outcome: 'SUCCESS', printedNothing: false, output }),
    { v: 1, kind: 'ack', workerId: 'w1', items: [{ executionId: 'e1', instanceId: '1', at: AT }] },
    { v: 1, kind: 'refusal', workerId: 'w1', items: [{ executionId: 'e1', instanceId: '1', reason: 'CLOCK_SKEW', at: AT, detail: 'd' }] },
  ];
})();

/** Every body that differs from a full base in one known field set to one of its boundary values. */
function* boundarySweep(): Generator<Obj> {
  for (const base of FULL_BASES) {
    const baseSlots = slots(base);
    for (let index = 0; index < baseSlots.length; index++) {
      const key = baseSlots[index]?.key;
      if (typeof key !== 'string' || !Object.hasOwn(FIELD_EDGES, key)) continue;
      for (const edge of FIELD_EDGES[key] as readonly Json[]) {
        const body = JSON.parse(JSON.stringify(base)) as Obj;
        const slot = slots(body)[index] as { parent: Obj; key: string };
        slot.parent[slot.key] = edge;
        yield body;
      }
    }
  }
}

const sameOutcome = (a: ParsedMessage, b: ParsedMessage): boolean =>
  isDeepStrictEqual(a, b) && (!a.ok || !b.ok || JSON.stringify(a.message) === JSON.stringify(b.message));

/** Compares `parseMessage` with zod alone on `bodies`; returns the mismatches and what each side did. */
function compareWithZod(bodies: Iterable<Obj>) {
  const mismatches: string[] = [];
  let cases = 0;
  let fastAccepted = 0;
  let rejected = 0;
  for (const body of bodies) {
    cases++;
    const text = JSON.stringify(body).replace(RAW_TOKEN, '$1');
    const strict = parseMessageStrict(text);
    const actual = parseMessage(text);
    if (!sameOutcome(actual, strict)) {
      mismatches.push(`case ${cases - 1}: ${text.slice(0, 600)}\n  parseMessage: ${JSON.stringify(actual).slice(0, 300)}\n  zod alone:    ${JSON.stringify(strict).slice(0, 300)}`);
    }
    if (!strict.ok) rejected++;
    const parsed = JSON.parse(text) as Obj;
    if (typeof parsed.kind === 'string' && isStructureSound(parsed, MAX_MESSAGE_DEPTH) && fastAcceptMessage(parsed.kind, parsed) !== undefined) fastAccepted++;
  }
  return { mismatches, cases, fastAccepted, rejected };
}

describe('parseMessage on mutated messages', () => {
  it('gives the same outcome as zod alone for every boundary value of every field of full messages', () => {
    const run = compareWithZod(boundarySweep());
    expect(run.mismatches.slice(0, 5)).toEqual([]);
    expect(run.cases).toBeGreaterThan(500);
    expect(run.fastAccepted).toBeGreaterThan(run.cases * 0.2);
    expect(run.rejected).toBeGreaterThan(run.cases * 0.3);
  });

  it(`gives the same outcome as zod alone for ${CASES} random seeded mutations (seed ${SEED})`, () => {
    const r = makeRandom(SEED);
    const bodies = Array.from({ length: CASES }, () => {
      const body = validMessage(r);
      // Mostly one mutation (the most telling: one fault in a valid body); none keeps it valid.
      const mutations = r.pick([0, 1, 1, 1, 1, 2, 2, 3]);
      for (let m = 0; m < mutations; m++) mutate(body, r);
      return body;
    });
    const run = compareWithZod(bodies);
    expect(run.mismatches.slice(0, 5)).toEqual([]);
    // The run exercised both sides: many bodies taken by the fast path, many rejected by zod.
    expect(run.fastAccepted).toBeGreaterThan(CASES * 0.25);
    expect(run.rejected).toBeGreaterThan(CASES * 0.4);
  });
});

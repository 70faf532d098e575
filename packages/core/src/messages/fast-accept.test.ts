import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { httpExecSchema, pluginExecSchema, secretRefSchema, shellExecSchema } from '../task/exec-schema.js';
import { parseMessage, parseMessageStrict } from './codec.js';
import { bizDateSchema, idSchema, instantSchema, OUTPUT_TAIL_MAX_BYTES } from './envelope.js';
import { fastAcceptMessage } from './fast-accept.js';
import { ENV_NAME_PATTERN, HEADER_NAME_PATTERN, PLUGIN_NAME_PATTERN, SECRET_NAME_PATTERN } from '../task/exec-schema.js';
import { ID_MAX_LENGTH } from './envelope.js';
import { BIZ_DATE_PATTERN, INSTANT_PATTERN } from './fast-fields.js';

type Body = Record<string, unknown>;

const at = '2026-12-01T02:00:01.000Z';

function dispatchItem(overrides: Body = {}): Body {
  return {
    executionId: '0193a1b2-0000-7000-8000-000000000001',
    instanceId: '101',
    taskName: 'order_stat_daily',
    taskId: '7',
    expectedTime: '2026-12-01T02:00:00.000Z',
    bizDate: '2026-12-01',
    attempt: 1,
    maxAttempts: 3,
    runNo: 1,
    priority: 5,
    params: { source: 'order_table' },
    exec: { type: 'shell', command: ['true'] },
    timeoutSeconds: 120,
    ackDeadline: '2026-12-01T02:00:05.000Z',
    traceId: 'trace-1',
    idempotencyKey: 'order_stat_daily:2026-12-01T02:00:00.000Z:1',
    ...overrides,
  };
}

const dispatch = (...items: Body[]): Body => ({ v: 1, kind: 'dispatch', workerId: 'w1', items });
const result = (items: Body[], extra: Body = {}): Body => ({ v: 1, kind: 'result', workerId: 'w1', ...extra, items });
const minimalResult = (overrides: Body = {}): Body => ({ executionId: 'e1', instanceId: '1', outcome: 'SUCCESS', endedAt: at, ...overrides });

/** Valid bodies the fast path must accept, each with what makes it interesting. */
const VALID: Array<[string, Body]> = [
  ['dispatch: minimal shell item (shell defaults to false)', dispatch(dispatchItem())],
  [
    'dispatch: shell with every field, secretRefs and known placeholders',
    dispatch(
      dispatchItem({
        exec: {
          type: 'shell',
          command: ['python3', 'run.py', '{{ bizDate }}', '--at={{expectedTime}}', '{{params.db.host}}', '{not a placeholder}'],
          env: { TOKEN: { secretRef: 'API_TOKEN' }, MODE: 'batch', _X1: '' },
          cwd: '/srv/jobs',
          shell: true,
        },
      }),
    ),
  ],
  ['dispatch: http with defaults (method POST)', dispatch(dispatchItem({ exec: { type: 'http', url: 'http://orders.internal:8080/ax/order_stat' } }))],
  [
    'dispatch: http with every field',
    dispatch(
      dispatchItem({
        exec: {
          type: 'http',
          url: 'HTTPS://Example.com:8443/a/b?x=1&y=%20#frag',
          method: 'DELETE',
          headers: { 'X-Team': 'orders', Authorization: { secretRef: 'ORDERS_TOKEN' }, "x!#$%&'*+.^_`|~-1": '' },
        },
      }),
    ),
  ],
  ['dispatch: plugin without config (defaults to {})', dispatch(dispatchItem({ exec: { type: 'plugin', name: 'archive_files' } }))],
  [
    'dispatch: plugin with nested config and placeholders',
    dispatch(
      dispatchItem({
        exec: { type: 'plugin', name: 'a.b-c_1', config: { dir: '/data/{{bizDate}}', keep: [1, '{{params.n}}', { deep: [null, true] }], none: null } },
      }),
    ),
  ],
  [
    'dispatch: shards, bounds and unusual but valid values',
    dispatch(
      dispatchItem({ shardIndex: 0, shardTotal: 1, priority: 0, attempt: 9_007_199_254_740_991, params: {} }),
      dispatchItem({ shardIndex: 4, shardTotal: 5, priority: 9, expectedTime: '2024-02-29T23:59:59.123456+08:00', bizDate: '2024-02-29' }),
      dispatchItem({ executionId: 'x'.repeat(128), taskName: '日次集計', traceId: '😀', params: { nested: { a: [1, { b: 'c' }] }, '1': 2 } }),
    ),
  ],
  [
    'dispatch: unknown fields outside exec are dropped',
    { ...dispatch(dispatchItem({ futureField: { any: ['thing'] }, shardIndexx: 1 })), sentAt: at, extra: null },
  ],
  ['result: minimal item', result([minimalResult()])],
  [
    'result: every optional field, origin report',
    result(
      [
        minimalResult({
          exitCode: 0,
          outputTail: 'done\n',
          outputTruncated: false,
          error: 'none',
          data: { rows: 12, nested: { list: [1, 2] } },
          startedAt: '2026-12-01T02:00:00Z',
          async: true,
        }),
      ],
      { origin: 'report' },
    ),
  ],
  [
    'result: nulls and negatives where allowed, async false on a failure',
    result(
      [
        minimalResult({ outcome: 'TIMEOUT', exitCode: null, async: false }),
        minimalResult({ outcome: 'FAILED', exitCode: -9, outputTruncated: true, error: 'e'.repeat(4_096) }),
        minimalResult({ outcome: 'WORKER_RESTART', data: {} }),
        minimalResult({ outcome: 'CANCELED', outputTail: 'é'.repeat(OUTPUT_TAIL_MAX_BYTES / 2) }),
      ],
      { origin: 'worker' },
    ),
  ],
  ['result: unknown fields are dropped', result([minimalResult({ durationMs: 12 })], { batchId: 'b1' })],
  [
    'result: output carried in the result (both streams, the 8 KiB bound, no chunk, printedNothing)',
    result([
      minimalResult({
        output: {
          chunks: [
            { stream: 'stdout', offset: 0, allOffset: 0, data: Buffer.from('GET /job\n').toString('base64') },
            { stream: 'stderr', offset: 3, allOffset: 12, data: 'AA==' },
          ],
          stdoutBytes: 9,
          stderrBytes: 4,
          truncated: false,
        },
      }),
      minimalResult({ executionId: 'e2', output: { chunks: [{ stream: 'stdout', offset: 100, allOffset: 100, data: Buffer.alloc(8_192, 1).toString('base64') }], stdoutBytes: 9_000, stderrBytes: 0, truncated: true } }),
      minimalResult({ executionId: 'e3', output: { chunks: [], stdoutBytes: 5, stderrBytes: 0, truncated: false } }),
      minimalResult({ executionId: 'e4', printedNothing: true }),
    ]),
  ],
  ['dispatch: outputInResult', dispatch(dispatchItem({ outputInResult: true }), dispatchItem({ outputInResult: false }))],
  ['ack: items with unknown fields', { v: 1, kind: 'ack', workerId: 'w1', items: [{ executionId: 'e1', instanceId: '1', at, seq: 3 }], x: 1 }],
  [
    'ack: the largest batch',
    { v: 1, kind: 'ack', workerId: 'w1', items: Array.from({ length: 1_000 }, (_, n) => ({ executionId: `e${n}`, instanceId: String(n), at })) },
  ],
  ['refusal: minimal item', { v: 1, kind: 'refusal', workerId: 'w1', items: [{ executionId: 'e1', instanceId: '1', reason: 'EXPIRED' }] }],
  [
    'refusal: every reason and optional field',
    {
      v: 1,
      kind: 'refusal',
      workerId: 'w1',
      items: [
        { executionId: 'e1', instanceId: '1', reason: 'CLOCK_SKEW', at, detail: 'offset 2300 ms' },
        { executionId: 'e2', instanceId: '2', reason: 'SHUTTING_DOWN', detail: 'd'.repeat(1_000) },
        { executionId: 'e3', instanceId: '3', reason: 'DUPLICATE', at },
      ],
    },
  ],
];

/** Valid bodies the fast path declines on purpose (it does not model them); zod decides. */
const LEFT_TO_ZOD: Array<[string, Body]> = [
  ['an id over 128 UTF-16 units but within 128 code points', dispatch(dispatchItem({ instanceId: '😀'.repeat(100) }))],
  ['a URL zod trims', dispatch(dispatchItem({ exec: { type: 'http', url: ' http://orders.internal/x ' } }))],
  ['a URL holding a newline zod strips', dispatch(dispatchItem({ exec: { type: 'http', url: 'http://orders.internal/a\nb' } }))],
  ['a refusal detail over 1,000 units but within 1,000 code points', { v: 1, kind: 'refusal', workerId: 'w', items: [{ executionId: 'e', instanceId: '1', reason: 'EXPIRED', detail: '😀'.repeat(600) }] }],
  [
    'result output with a key zod drops',
    result([minimalResult({ output: { chunks: [{ stream: 'stdout', offset: 0, allOffset: 0, data: 'eA==', extra: 1 }], stdoutBytes: 1, stderrBytes: 0, truncated: false } })]),
  ],
  ['a kind without a fast path', { v: 1, kind: 'cancel', workerId: 'w1', executionIds: ['e1'], reason: 'COVERED' }],
  [
    '#22 a python exec',
    dispatch(dispatchItem({ exec: { type: 'python', script: '/srv/jobs/report.py', args: ['--date', '{{bizDate}}'], venv: '/opt/venvs/report', env: { T: { secretRef: 'T_1' } } } })),
  ],
  ['#22 a sql exec', dispatch(dispatchItem({ exec: { type: 'sql', datasource: 'REPORTS_DB', script: 'DELETE FROM t WHERE d = @ax_biz_date; SELECT 1;' } }))],
];

function fastAccept(raw: string) {
  const body = JSON.parse(raw) as Body;
  return fastAcceptMessage(String(body.kind), body);
}

describe('fastAcceptMessage', () => {
  it.each(VALID)('accepts what zod accepts and outputs the same message: %s', (_name, input) => {
    const raw = JSON.stringify(input);
    const strict = parseMessageStrict(raw);
    if (!strict.ok) throw new Error(`sample rejected by zod: ${strict.reason}`);
    const fast = fastAccept(raw);
    expect(fast).toBeDefined();
    expect(fast).toStrictEqual(strict.message);
    // Same keys in the same order too: re-encoding a message gives the same bytes either way.
    expect(JSON.stringify(fast)).toBe(JSON.stringify(strict.message));
    expect(parseMessage(raw)).toStrictEqual(strict);
  });

  it.each(LEFT_TO_ZOD)('leaves %s to zod, and parseMessage still accepts it as zod does', (_name, input) => {
    const raw = JSON.stringify(input);
    const strict = parseMessageStrict(raw);
    expect(strict.ok).toBe(true);
    expect(fastAccept(raw)).toBeUndefined();
    expect(parseMessage(raw)).toStrictEqual(strict);
  });

  it('mirrors the limits and patterns the schemas declare', () => {
    const patternsOf = (schema: z.ZodType): string[] =>
      (schema._zod.def.checks ?? []).flatMap((check) => {
        const pattern = (check._zod.def as { pattern?: RegExp }).pattern;
        return pattern === undefined ? [] : [pattern.source];
      });
    expect(idSchema.minLength).toBe(1);
    expect(idSchema.maxLength).toBe(ID_MAX_LENGTH);
    expect(INSTANT_PATTERN.source).toBe(instantSchema._zod.pattern.source);
    expect(BIZ_DATE_PATTERN.source).toBe(bizDateSchema._zod.pattern.source);
    expect(patternsOf(secretRefSchema.shape.secretRef)).toEqual([SECRET_NAME_PATTERN.source]);
    expect(patternsOf(shellExecSchema.shape.env.unwrap().keyType)).toEqual([ENV_NAME_PATTERN.source]);
    expect(patternsOf(httpExecSchema.shape.headers.unwrap().keyType)).toEqual([HEADER_NAME_PATTERN.source]);
    expect(patternsOf(pluginExecSchema.shape.name)).toEqual([PLUGIN_NAME_PATTERN.source]);
  });
});

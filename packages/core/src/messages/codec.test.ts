import { describe, expect, it } from 'vitest';
import { ValidationError } from '../errors.js';
import { encodeMessage, MESSAGE_KINDS, parseMessage, type Message } from './codec.js';
import { idempotencyKeyOf, type DispatchItem, type DispatchMessage } from './dispatch.js';
import { OUTPUT_TAIL_MAX_BYTES } from './envelope.js';

function item(n: number, overrides: Partial<DispatchItem> = {}): DispatchItem {
  const expectedTime = '2026-12-01T02:00:00.000Z';
  return {
    executionId: `0193a1b2-0000-7000-8000-00000000000${n}`,
    instanceId: String(100 + n),
    taskName: 'order_stat_daily',
    taskId: '7',
    team: 'default',
    keyVersion: 1,
    expectedTime,
    bizDate: '2026-12-01',
    attempt: 1,
    maxAttempts: 3,
    runNo: 1,
    priority: 5,
    params: { source: 'order_table' },
    exec: { type: 'shell', command: ['python3', 'run.py', '{{bizDate}}'], shell: false, env: { TOKEN: { secretRef: 'API_TOKEN' } } },
    timeoutSeconds: 120,
    ackDeadline: '2026-12-01T02:00:05.000Z',
    traceId: 'trace-1',
    idempotencyKey: idempotencyKeyOf('order_stat_daily', expectedTime, 1),
    ...overrides,
  };
}

const dispatch: DispatchMessage = { v: 1, kind: 'dispatch', workerId: 'w1', items: [item(1), item(2, { shardIndex: 1, shardTotal: 2 })] };

function reasonOf(raw: Buffer | string): string {
  const parsed = parseMessage(raw);
  if (parsed.ok) throw new Error('expected a rejection');
  return parsed.reason;
}

describe('parseMessage / encodeMessage', () => {
  it('round-trips a 2-item dispatch', () => {
    const encoded = encodeMessage(dispatch);
    expect(Buffer.isBuffer(encoded)).toBe(true);
    const parsed = parseMessage(encoded);
    expect(parsed).toEqual({ ok: true, message: dispatch });
    if (parsed.ok && parsed.message.kind === 'dispatch') {
      expect(parsed.message.items.map((i) => i.instanceId)).toEqual(['101', '102']);
      expect(parsed.message.items[0]?.idempotencyKey).toBe('order_stat_daily:2026-12-01T02:00:00.000Z:1');
    }
  });

  it('round-trips every kind', () => {
    const at = '2026-12-01T02:00:01.000Z';
    const messages: Message[] = [
      dispatch,
      { v: 1, kind: 'ack', workerId: 'w1', items: [{ executionId: 'e1', instanceId: '1', at }, { executionId: 'e2', instanceId: '2', at }] },
      { v: 1, kind: 'refusal', workerId: 'w1', items: [{ executionId: 'e1', instanceId: '1', reason: 'CLOCK_SKEW', detail: 'offset 2300 ms' }] },
      {
        v: 1,
        kind: 'result',
        workerId: 'w1',
        items: [
          { executionId: 'e1', instanceId: '1', outcome: 'SUCCESS', exitCode: 0, outputTail: 'done\n', startedAt: at, endedAt: at },
          { executionId: 'e2', instanceId: '2', outcome: 'SUCCESS', async: true, endedAt: at },
          { executionId: 'e3', instanceId: '3', outcome: 'TIMEOUT', exitCode: null, outputTruncated: true, error: 'killed after 120 s', endedAt: at },
        ],
      },
      {
        v: 1,
        kind: 'heartbeat',
        workerId: 'w1',
        host: 'h',
        tags: ['etl'],
        cores: 4,
        slots: 16,
        running: 1,
        runningExecutionIds: ['e1'],
        avgDurationMs5m: 1200,
        draining: false,
        version: '0.1.0',
        startedAt: at,
        at,
        clockOffsetMs: -12,
      },
      { v: 1, kind: 'cancel', workerId: 'w1', executionIds: ['e1', 'e2'], reason: 'CANCELED_BY_USER' },
      {
        v: 1,
        kind: 'log',
        workerId: 'w1',
        items: [
          { part: 'chunk', executionId: 'e1', instanceId: '1', stream: 'stdout', offset: 0, allOffset: 0, data: Buffer.from('hello\n').toString('base64') },
          { part: 'chunk', executionId: 'e1', instanceId: '1', stream: 'stderr', offset: 0, allOffset: 6, data: Buffer.from([0xff, 0x00]).toString('base64') },
          { part: 'end', executionId: 'e1', instanceId: '1', stdoutBytes: 6, stderrBytes: 2, truncated: false },
        ],
      },
    ];
    expect(messages.map((m) => m.kind).sort()).toEqual([...MESSAGE_KINDS].sort());
    for (const message of messages) expect(parseMessage(encodeMessage(message))).toEqual({ ok: true, message });
  });

  it('rejects a log chunk whose data is not base64 or whose offset is negative, naming the field', () => {
    const chunk = { part: 'chunk', executionId: 'e1', instanceId: '1', stream: 'stdout', offset: 0, allOffset: 0, data: 'aGk=' };
    const bad = (item: Record<string, unknown>) => parseMessage(JSON.stringify({ v: 1, kind: 'log', workerId: 'w1', items: [{ ...chunk, ...item }] }));
    const reason = (item: Record<string, unknown>): string => {
      const parsed = bad(item);
      return parsed.ok ? '(accepted)' : parsed.reason;
    };
    expect(bad({}).ok).toBe(true);
    expect(reason({ data: 'not base64!' })).toContain('data');
    expect(reason({ offset: -1 })).toContain('offset');
    expect(reason({ stream: 'stdin' })).toContain('stream');
  });

  it('accepts a string body too', () => {
    expect(parseMessage(JSON.stringify(dispatch)).ok).toBe(true);
  });

  it('rejects bad JSON without throwing', () => {
    expect(reasonOf('{"v":1,')).toMatch(/^invalid JSON: /);
    expect(reasonOf(Buffer.from([0xff, 0xfe, 0x00]))).toMatch(/^invalid JSON: /);
    expect(reasonOf('')).toMatch(/^invalid JSON: /);
  });

  it('rejects bodies that are not objects', () => {
    expect(reasonOf('[1,2]')).toBe('message must be a JSON object, got an array of 2');
    expect(reasonOf('null')).toBe('message must be a JSON object, got null');
    expect(reasonOf('"dispatch"')).toBe('message must be a JSON object, got "dispatch"');
  });

  it('R22 rejects a missing or unsupported version, naming it', () => {
    expect(reasonOf('{"kind":"ack"}')).toBe('message has no protocol version "v"');
    expect(reasonOf(JSON.stringify({ ...dispatch, v: 2 }))).toBe('unsupported message version 2 (this build reads 1)');
    expect(reasonOf(JSON.stringify({ ...dispatch, v: '1' }))).toBe('unsupported message version "1" (this build reads 1)');
  });

  it('rejects an unknown kind, naming it', () => {
    expect(reasonOf('{"v":1,"kind":"explode"}')).toBe('unknown message kind "explode" (known: dispatch, ack, refusal, result, heartbeat, cancel, log)');
    expect(reasonOf('{"v":1}')).toMatch(/^unknown message kind nothing/);
    expect(reasonOf('{"v":1,"kind":"__proto__"}')).toMatch(/^unknown message kind "__proto__"/);
  });

  it('R22 tolerates unknown fields of the same version (a newer producer) and drops them', () => {
    const newer = { ...dispatch, sentAt: 'x', items: dispatch.items.map((i) => ({ ...i, futureField: 1 })) };
    const parsed = parseMessage(JSON.stringify(newer));
    expect(parsed).toEqual({ ok: true, message: dispatch });
  });

  it('names the field and value of an invalid message', () => {
    const bad = { ...dispatch, items: [item(1, { attempt: 0 }), item(2, { bizDate: '2026-13-01' })] };
    const reason = reasonOf(JSON.stringify(bad));
    expect(reason).toContain('invalid dispatch message: ');
    expect(reason).toContain('items[0].attempt: must be at least 1, got 0');
    expect(reason).toContain('items[1].bizDate: must be a date YYYY-MM-DD, got "2026-13-01"');
  });

  it('rejects empty batches, bad shards and oversize output tails', () => {
    expect(reasonOf(JSON.stringify({ ...dispatch, items: [] }))).toContain('items: must have at least one item');
    expect(reasonOf(JSON.stringify({ ...dispatch, items: [item(1, { shardIndex: 2, shardTotal: 2 })] }))).toContain(
      'items[0].shardIndex: must be below shardTotal 2, got 2',
    );
    const at = '2026-12-01T02:00:01.000Z';
    const big = { v: 1, kind: 'result', workerId: 'w', items: [{ executionId: 'e', instanceId: '1', outcome: 'FAILED', endedAt: at, outputTail: 'é'.repeat(OUTPUT_TAIL_MAX_BYTES / 2 + 1) }] };
    expect(reasonOf(JSON.stringify(big))).toContain(`items[0].outputTail: must be at most ${OUTPUT_TAIL_MAX_BYTES} bytes, got ${OUTPUT_TAIL_MAX_BYTES + 2}`);
  });

  it('rejects async results that do not report SUCCESS', () => {
    const at = '2026-12-01T02:00:01.000Z';
    const msg = { v: 1, kind: 'result', workerId: 'w', items: [{ executionId: 'e', instanceId: '1', outcome: 'FAILED', async: true, endedAt: at }] };
    expect(reasonOf(JSON.stringify(msg))).toContain('items[0].async: async results must have outcome SUCCESS, got "FAILED"');
  });

  it('rejects unknown refusal reasons and outcomes', () => {
    const refusal = { v: 1, kind: 'refusal', workerId: 'w', items: [{ executionId: 'e', instanceId: '1', reason: 'BORED' }] };
    expect(reasonOf(JSON.stringify(refusal))).toContain('items[0].reason: must be one of "EXPIRED", "CLOCK_SKEW", "SHUTTING_DOWN", "DUPLICATE", "RECALLED", got "BORED"');
  });

  it('rejects __proto__ keys inside params', () => {
    const raw = JSON.stringify(dispatch).replace('"params":{"source":"order_table"}', '"params":{"__proto__":{"polluted":1}}');
    expect(reasonOf(raw)).toBe('invalid dispatch message: the key "__proto__" is not allowed');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('does not crash on deeply nested input', () => {
    const deep = `${'['.repeat(50_000)}${']'.repeat(50_000)}`;
    const raw = `{"v":1,"kind":"ack","workerId":"w","items":${deep}}`;
    expect(parseMessage(raw).ok).toBe(false);
  });

  it('refuses to encode an invalid message', () => {
    const bad = { ...dispatch, items: [item(1, { priority: 11 })] };
    expect(() => encodeMessage(bad)).toThrow(ValidationError);
    expect(() => encodeMessage(bad)).toThrow('items[0].priority: must be at most 9, got 11');
  });
});

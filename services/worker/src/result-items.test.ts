import { encodeTrustedMessage, OUTPUT_TAIL_MAX_BYTES, parseMessage, resultItemSchema } from '@ax/core';
import { describe, expect, it } from 'vitest';
import type { ExecutionOutcome } from './executors/types.js';
import { resultItem } from './result-items.js';

const ids = { executionId: '0193aaaa-0000-7000-8000-000000000001', instanceId: '42' };
const STARTED_MS = Date.UTC(2026, 10, 30, 4, 0, 0);

describe('resultItem', () => {
  const outcomes: Array<[string, ExecutionOutcome]> = [
    ['http success with data', { outcome: 'SUCCESS', exitCode: 200, data: { rows: 3 }, outputTail: '{"success":true}', outputTruncated: false }],
    ['async 202', { outcome: 'SUCCESS', exitCode: 202, async: true }],
    ['shell failure', { outcome: 'FAILED', exitCode: 2, error: 'exit 2', outputTail: 'boom\n', outputTruncated: true }],
    ['timeout without exit code', { outcome: 'TIMEOUT', exitCode: null, error: 'no answer within 5 s' }],
    ['canceled', { outcome: 'CANCELED', error: 'canceled before it arrived' }],
  ];
  for (const [name, outcome] of outcomes) {
    it(`gives what the schema outputs: ${name}`, () => {
      const item = resultItem(ids, outcome, STARTED_MS, STARTED_MS + 15);
      expect(item).toStrictEqual(resultItemSchema.parse(item));
      expect(Object.keys(item)).toEqual(Object.keys(resultItemSchema.parse(item)));
      expect(item.endedAt).toBe('2026-11-30T04:00:00.015Z');
    });
  }

  it('keeps only the last OUTPUT_TAIL_MAX_BYTES bytes of a long tail, on a character boundary', () => {
    const item = resultItem(ids, { outcome: 'SUCCESS', exitCode: 0, outputTail: `${'é'.repeat(OUTPUT_TAIL_MAX_BYTES)}end` }, STARTED_MS, STARTED_MS + 1);
    expect(Buffer.byteLength(item.outputTail ?? '', 'utf8')).toBeLessThanOrEqual(OUTPUT_TAIL_MAX_BYTES);
    expect(item.outputTail?.endsWith('end')).toBe(true);
    expect(item.outputTail?.startsWith('é')).toBe(true);
  });

  it('falls back to a minimal item naming the problem when the outcome does not fit the schema', () => {
    const item = resultItem(ids, { outcome: 'FAILED', exitCode: 1.5 }, STARTED_MS, STARTED_MS + 1);
    expect(item).toMatchObject({ ...ids, outcome: 'FAILED', exitCode: null });
    expect(item.error).toMatch(/^result trimmed: /);
    expect(resultItemSchema.safeParse(item).success).toBe(true);
  });

  it('#45 an answer whose data cannot be carried fails the item alone, without the data; the message it joins is read whole', () => {
    const data = JSON.parse('{"rows":1,"nested":{"__proto__":{"polluted":true}}}') as Record<string, unknown>;
    const item = resultItem(ids, { outcome: 'SUCCESS', exitCode: 200, data }, STARTED_MS, STARTED_MS + 1);
    expect(item).toMatchObject({ ...ids, outcome: 'FAILED', exitCode: 200, error: `the answer's data was refused: the key "__proto__" is not allowed (at data.nested.__proto__)` });
    expect(item.data).toBeUndefined();
    const body = encodeTrustedMessage({ v: 1, kind: 'result', workerId: 'w1', items: [item, resultItem(ids, { outcome: 'SUCCESS', exitCode: 200, data: { rows: 2 } }, STARTED_MS, STARTED_MS + 1)] });
    expect(parseMessage(body).ok).toBe(true);
  });
});

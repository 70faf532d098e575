import { describe, expect, it } from 'vitest';
import { parseMessageByItem, type ParsedByItem, type RefusedItem } from './by-item.js';
import { parseMessage, parseMessageStrict, type Message } from './codec.js';

const ended = '2026-12-01T02:00:05.000Z';

function result(n: number, extra = ''): string {
  return `{"executionId":"0193a1b2-0000-7000-8000-00000000000${n}","instanceId":"${100 + n}","outcome":"SUCCESS","exitCode":200,"endedAt":"${ended}"${extra}}`;
}

function message(kind: string, items: string[], envelope = '"workerId":"w1"'): string {
  return `{"v":1,"kind":"${kind}",${envelope},"items":[${items.join(',')}]}`;
}

function nested(levels: number): string {
  return `${'{"k":'.repeat(levels)}1${'}'.repeat(levels)}`;
}

/** The message read, its items and what was refused. */
function accepted(parsed: ParsedByItem): { message: Message; items: ReadonlyArray<{ executionId: string }>; refused: readonly RefusedItem[] } {
  if (!parsed.ok) throw new Error(`expected the message to be read: ${parsed.reason}`);
  const items: ReadonlyArray<{ executionId: string }> = 'items' in parsed.message ? parsed.message.items : [];
  return { message: parsed.message, items, refused: parsed.refused };
}

/** Items that are each good or bad on their own; zod (via a one-item message) is the reference. */
const CANDIDATES = [
  result(1),
  result(2, ',"data":{"__proto__":{"polluted":true}}'),
  result(3, `,"data":${nested(36)}`),
  result(4, `,"data":${nested(37)}`),
  result(5, ',"outcome":"NOPE"'),
  result(6, ',"async":true,"outcome":"FAILED"'),
  result(7, ',"data":{"rows":[1,2,3]},"unknownField":{"x":1}'),
  '"not an item"',
  '{"executionId":"","instanceId":"1","outcome":"SUCCESS","endedAt":"x"}',
  result(8, ',"outputTail":7'),
];

describe('parseMessageByItem (#45)', () => {
  it('a valid message is read as parseMessage reads it, nothing refused', () => {
    const raw = message('result', [result(1), result(2, ',"data":{"rows":5}')]);
    const parsed = accepted(parseMessageByItem(raw));
    expect(parsed.refused).toEqual([]);
    expect(parsed.message).toStrictEqual((parseMessage(raw) as { message: unknown }).message);
  });

  it('a "__proto__" key in one result refuses that item alone, naming its execution', () => {
    const raw = message('result', [result(1), result(2, ',"data":{"__proto__":{"polluted":true}}'), result(3)]);
    expect(parseMessage(raw).ok).toBe(false);
    const parsed = accepted(parseMessageByItem(raw));
    expect(parsed.items.map((i) => i.executionId)).toEqual(['0193a1b2-0000-7000-8000-000000000001', '0193a1b2-0000-7000-8000-000000000003']);
    expect(parsed.refused).toEqual([
      { index: 1, executionId: '0193a1b2-0000-7000-8000-000000000002', instanceId: '102', cause: 'proto_key', reason: 'item 1 of a result message: the key "__proto__" is not allowed' },
    ]);
    expect(Object.getPrototypeOf(parsed.items[0])).toBe(Object.prototype);
  });

  it('nesting past the message bound refuses that item alone (cause too_deep); one level less is read', () => {
    const parsed = accepted(parseMessageByItem(message('result', [result(1, `,"data":${nested(40)}`), result(2, `,"data":${nested(36)}`)])));
    expect(parsed.items.map((i) => i.executionId)).toEqual(['0193a1b2-0000-7000-8000-000000000002']);
    expect(parsed.refused).toMatchObject([{ index: 0, cause: 'too_deep', executionId: '0193a1b2-0000-7000-8000-000000000001' }]);
  });

  it('an item its schema refuses is refused alone (cause schema) with zod\'s reason', () => {
    const parsed = accepted(parseMessageByItem(message('result', [result(1, ',"outcome":"NOPE"'), result(2)])));
    expect(parsed.items).toHaveLength(1);
    expect(parsed.refused).toHaveLength(1);
    expect(parsed.refused[0]?.cause).toBe('schema');
    expect(parsed.refused[0]?.reason).toMatch(/^item 0 of a result message: .*outcome/);
  });

  it('every item bad: the message is read with no items, each one refused', () => {
    const parsed = accepted(parseMessageByItem(message('result', ['"x"', '{"executionId":7}'])));
    expect(parsed.items).toEqual([]);
    expect(parsed.refused.map((r) => r.index)).toEqual([0, 1]);
    expect(parsed.refused[1]?.executionId).toBeUndefined();
  });

  it('a bad envelope refuses the whole message with parseMessage\'s reason', () => {
    for (const raw of [
      message('result', [result(1)], '"workerId":""'),
      message('result', [result(1)], '"workerId":"w1","origin":"somewhere"'),
      message('result', [result(1)], '"workerId":"w1","extra":{"__proto__":{}}'),
      message('result', [], '"workerId":"w1"'),
      '{"v":2,"kind":"result","workerId":"w1","items":[]}',
      'not json',
    ]) {
      const parsed = parseMessageByItem(raw);
      expect(parsed).toEqual({ ok: false, reason: (parseMessage(raw) as { reason: string }).reason });
    }
  });

  it('acks, refusals and log items are read item by item too; a dispatch is not', () => {
    const ack = accepted(parseMessageByItem(message('ack', [`{"executionId":"e1","instanceId":"1","at":"${ended}"}`, '{"executionId":"e2","instanceId":"2","at":"yesterday"}'])));
    expect(ack.items).toHaveLength(1);
    expect(ack.refused).toMatchObject([{ index: 1, executionId: 'e2', cause: 'schema' }]);
    const refusal = accepted(parseMessageByItem(message('refusal', ['{"executionId":"e1","instanceId":"1","reason":"EXPIRED"}', '{"executionId":"e2","instanceId":"2","reason":"BORED"}'])));
    expect(refusal.items).toHaveLength(1);
    const log = accepted(
      parseMessageByItem(
        message('log', [
          '{"part":"chunk","executionId":"e1","instanceId":"1","stream":"stdout","offset":0,"allOffset":0,"data":"aGk="}',
          '{"part":"chunk","executionId":"e2","instanceId":"2","stream":"stdout","offset":0,"allOffset":0,"data":"not base64!"}',
          '{"part":"end","executionId":"e1","instanceId":"1","stdoutBytes":2,"stderrBytes":0,"truncated":false}',
        ]),
      ),
    );
    expect(log.items.map((i) => i.executionId)).toEqual(['e1', 'e1']);
    expect(log.refused).toMatchObject([{ index: 1, executionId: 'e2', cause: 'schema' }]);
    const dispatch = parseMessageByItem(message('dispatch', ['{"executionId":"e1"}']));
    expect(dispatch.ok).toBe(false);
  });

  it('keeps exactly the items zod accepts one by one, in order, as zod outputs them', () => {
    // Every subset order of the candidates would be a lot; rotations cover each position.
    for (let shift = 0; shift < CANDIDATES.length; shift++) {
      const items = [...CANDIDATES.slice(shift), ...CANDIDATES.slice(0, shift)];
      const expected = items.flatMap((item) => {
        const alone = parseMessageStrict(message('result', [item]));
        return alone.ok && alone.message.kind === 'result' ? alone.message.items : [];
      });
      const parsed = accepted(parseMessageByItem(message('result', items)));
      expect(parsed.items).toStrictEqual(expected);
      expect(parsed.items.length + parsed.refused.length).toBe(items.length);
    }
  });
});

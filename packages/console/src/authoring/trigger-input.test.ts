import { describe, expect, it } from 'vitest';
import { checkIdempotencyKey, checkParams, confirmationText } from './trigger-input';

describe('checkParams', () => {
  it('takes an object, empty text as none', () => {
    expect(checkParams('{"a": 1, "b": "x"}')).toEqual({ ok: true, value: { a: 1, b: 'x' } });
    expect(checkParams('  ')).toEqual({ ok: true, value: {} });
  });
  it('refuses what does not parse and what is not an object', () => {
    expect(checkParams('{a: 1}')).toMatchObject({ ok: false, message: expect.stringMatching(/^params: not JSON/) as unknown });
    expect(checkParams('[1]')).toMatchObject({ ok: false, message: expect.stringContaining('got an array') as unknown });
    expect(checkParams('null')).toMatchObject({ ok: false, message: expect.stringContaining('got null') as unknown });
    expect(checkParams('3')).toMatchObject({ ok: false, message: expect.stringContaining('got number') as unknown });
  });
});

describe('checkIdempotencyKey', () => {
  it('takes visible ASCII', () => {
    expect(checkIdempotencyKey('')).toBeNull();
    expect(checkIdempotencyKey('run-2026-12-01')).toBeNull();
    expect(checkIdempotencyKey('has space')).not.toBeNull();
    expect(checkIdempotencyKey('x'.repeat(256))).not.toBeNull();
  });
});

describe('confirmationText', () => {
  it('names what will run', () => {
    expect(confirmationText('daily', 'data', { a: 1, b: 2 }, '2026-12-01', '')).toBe('Run daily now on team data with 2 params, biz date 2026-12-01');
    expect(confirmationText('daily', 'data', { a: 1 }, '', 'k1')).toBe("Run daily now on team data with 1 param, biz date of today's slot in the task's zone (Idempotency-Key k1: a repeat within 24 h returns the same instance)");
    expect(confirmationText('daily', 'default', {}, '2026-12-01', '')).toBe('Run daily now on team default with no params, biz date 2026-12-01');
  });
});

import { describe, expect, it } from 'vitest';
import { OutputTail } from './output-tail.js';
import { maskOutcome, MIN_MASKED_LENGTH, NO_SECRETS, secretMask } from './secret-mask.js';

describe('#18 secrets: the output mask', () => {
  it('#18 secrets: replaces every occurrence of every value by ***, longest first', () => {
    const mask = secretMask(['hunter22', 'hunter22-long-form', 'other-secret']);
    expect(mask.text('a hunter22 b hunter22-long-form c other-secret hunter22')).toBe('a *** b *** c *** ***');
    expect(mask.text('nothing here')).toBe('nothing here');
    expect(mask.empty).toBe(false);
  });

  it(`#18 secrets: values shorter than ${MIN_MASKED_LENGTH} characters are not patterns (secrets.ts refuses them), an empty value masks nothing`, () => {
    const mask = secretMask(['', 'ab', 'abc']);
    expect(mask.empty).toBe(true);
    expect(mask.text('ab abc abcd')).toBe('ab abc abcd');
    expect(secretMask(['abcd']).text('ab abc abcd')).toBe('ab abc ***');
  });

  it('#18 secrets: masks each line of a multi-line value and the value as written in a JSON string', () => {
    const key = '-----BEGIN KEY-----\nMIIEvQIBADANBg\n-----END KEY-----';
    const mask = secretMask([key, 'say "hi"\\now']);
    expect(mask.text(`${key}\n`)).toBe('***\n');
    expect(mask.text('line 2 is MIIEvQIBADANBg only')).toBe('line 2 is *** only');
    expect(mask.text(JSON.stringify({ echo: key }))).toBe('{"echo":"***"}');
    expect(mask.text(JSON.stringify({ h: 'say "hi"\\now' }))).toBe('{"h":"***"}');
  });

  it('#18 secrets: a cut tail that begins with the end of a value has that piece masked; an uncut one is left as is', () => {
    const mask = secretMask(['s3cr3t-value-42']);
    expect(mask.tail('value-42 and more', true)).toBe('*** and more');
    expect(mask.tail('2 and more', true)).toBe('*** and more');
    expect(mask.tail('value-42 and more', false)).toBe('value-42 and more');
    expect(mask.tail('s3cr3t-value-42 x s3cr3t-value-42', true)).toBe('*** x ***');
  });

  it('#18 secrets: deep() and maskOutcome mask strings and keys of result data and the error, nothing else', () => {
    const mask = secretMask(['token-abcdef']);
    expect(mask.deep({ a: ['x token-abcdef y', 1, null, { 'token-abcdef': true }] })).toEqual({ a: ['x *** y', 1, null, { '***': true }] });
    expect(maskOutcome(mask, { outcome: 'FAILED' as const, error: 'bad token-abcdef', data: { echo: 'token-abcdef' } })).toEqual({ outcome: 'FAILED', error: 'bad ***', data: { echo: '***' } });
    const untouched: { outcome: 'SUCCESS'; error?: string } = { outcome: 'SUCCESS' };
    expect(maskOutcome(NO_SECRETS, untouched)).toBe(untouched);
  });

  it('#18 secrets: the output tail masks a value the truncation boundary would split, and one whose start was dropped', () => {
    const secret = 'ZXCV-secret-value-0123456789';
    const mask = secretMask([secret]);
    // The value straddles the last-16-bytes boundary: masked before the cut.
    const straddle = new OutputTail(16);
    straddle.push(Buffer.from(`prefix ${secret} tail\n`));
    expect(straddle.text(mask)).not.toMatch(/[0-9]{3}|secret|value/);
    expect(straddle.text(mask)).toMatch(/\*\*\* tail\n$/);
    expect(straddle.text()).toBe('0123456789 tail\n'); // what an unmasked tail would have shown
    // The value's start is in a chunk already dropped: the piece that begins the held text is masked.
    const dropped = new OutputTail(20);
    dropped.push(Buffer.from(`${'a'.repeat(30)} ${secret.slice(0, 10)}`));
    dropped.push(Buffer.from(`${secret.slice(10)} end\n`));
    dropped.push(Buffer.from(`${'b'.repeat(20)}\n`));
    expect(dropped.text(mask)).toBe(`${'b'.repeat(19)}\n`);
    const dropped2 = new OutputTail(20);
    dropped2.push(Buffer.from(`${'a'.repeat(30)} ${secret.slice(0, 10)}`));
    dropped2.push(Buffer.from(`${secret.slice(10)} end\n`));
    expect(dropped2.text(mask)).toBe('*** end\n');
    expect(dropped2.text()).toBe(`${secret.slice(-15)} end\n`);
  });
});

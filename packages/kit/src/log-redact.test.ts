import { describe, expect, it } from 'vitest';
import { MAX_DEPTH, REDACTED, redactSecrets } from './log-redact.js';

describe('redactSecrets', () => {
  it('hides secret-named fields at any depth, whatever their case, and exec headers and env whole', () => {
    const line = {
      Authorization: 'Bearer a',
      req: { headers: { authorization: 'Bearer b', 'set-cookie': ['s=1'], 'X-Ax-Signature': 'v2=x', accept: 'json' } },
      deep: { a: { b: { c: { apiKey: 'k', keep: 1 } } } },
      task: { name: 't', exec: { type: 'shell', command: ['echo'], env: { PW: 'p' }, headers: { 'X-Key': 'k' } } },
      list: [{ token: 't' }, 'plain'],
    };
    expect(redactSecrets(line)).toEqual({
      Authorization: REDACTED,
      req: { headers: { authorization: REDACTED, 'set-cookie': REDACTED, 'X-Ax-Signature': REDACTED, accept: 'json' } },
      deep: { a: { b: { c: { apiKey: REDACTED, keep: 1 } } } },
      task: { name: 't', exec: { type: 'shell', command: ['echo'], env: REDACTED, headers: REDACTED } },
      list: [{ token: REDACTED }, 'plain'],
    });
  });
  it('hides a worker enrollment credential and the logins a worker bootstrap hands out (#44)', () => {
    const line = { enrollment: { id: 'enr-abcdefghijkl', credential: 'axw_enr-abcdefghijkl_x' }, amqp: { username: 'ax.enr-abcdefghijkl', password: 'p' } };
    expect(redactSecrets(line)).toEqual({ enrollment: { id: 'enr-abcdefghijkl', credential: REDACTED }, amqp: { username: 'ax.enr-abcdefghijkl', password: REDACTED } });
  });
  it('never changes the caller\'s objects, and returns them as they are when nothing is hidden', () => {
    const inner = { password: 'p' };
    const line = { body: inner, other: { x: 1 } };
    const out = redactSecrets(line);
    expect(inner.password).toBe('p');
    expect(out.other).toBe(line.other); // untouched branches are shared, not copied
    const clean = { outcome: 'SUCCESS', exitCode: 0, nested: { a: [1, 2] } };
    expect(redactSecrets(clean)).toBe(clean);
  });
  it('leaves headers and env outside an exec alone, errors and other class instances to their serializers', () => {
    const err = Object.assign(new Error('boom'), { token: 'kept for the err serializer' });
    const line = { headers: { accept: 'json' }, env: { HOME: '/root' }, err, at: new Date(0) };
    expect(redactSecrets(line)).toBe(line);
  });
  it('stops at MAX_DEPTH, so a cyclic or absurdly deep object cannot hang a log call', () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expect(() => redactSecrets(cyclic)).not.toThrow();
    let deep: Record<string, unknown> = { token: 'too deep' };
    for (let i = 0; i <= MAX_DEPTH; i++) deep = { next: deep };
    expect(JSON.stringify(redactSecrets(deep))).toContain('too deep');
  });
});

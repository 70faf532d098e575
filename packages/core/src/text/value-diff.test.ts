import { describe, expect, it } from 'vitest';
import { canonical, valueDiff } from './value-diff.js';

describe('valueDiff', () => {
  it('walks objects key by key and compares arrays and scalars whole; key order does not count', () => {
    expect(canonical({ b: 1, a: [2, { d: 1, c: 2 }] })).toBe('{"a":[2,{"c":2,"d":1}],"b":1}');
    expect(valueDiff('', { a: 1, b: { c: 2, d: 3 }, l: [1, 2] }, { b: { d: 3, c: 4 }, a: 1, l: [2, 1] })).toEqual([
      { path: 'b.c', from: '2', to: '4' },
      { path: 'l', from: '[1,2]', to: '[2,1]' },
    ]);
    expect(valueDiff('x', { a: 1 }, { a: 1 })).toEqual([]);
  });

  it('an absent side is undefined; a value that is an object on one side only is shown whole', () => {
    expect(valueDiff('', { gone: 'x', kept: 1 }, { kept: 1, added: { y: true } })).toEqual([
      { path: 'added', from: undefined, to: '{"y":true}' },
      { path: 'gone', from: '"x"', to: undefined },
    ]);
    expect(valueDiff('retry', undefined, { max: 3 })).toEqual([{ path: 'retry', from: undefined, to: '{"max":3}' }]);
  });

  it('walkAbsent: an object on one side only is walked leaf by leaf, secrets under it masked', () => {
    expect(valueDiff('', undefined, { retry: { max: 3 }, exec: { env: { K: { secretRef: 'S' } } } }, { walkAbsent: true })).toEqual([
      { path: 'exec.env.K.secretRef', from: undefined, to: '***' },
      { path: 'retry.max', from: undefined, to: '3' },
    ]);
    expect(valueDiff('', { a: { b: 1 } }, undefined, { walkAbsent: true })).toEqual([{ path: 'a.b', from: '1', to: undefined }]);
  });

  it('masks everything under env, headers and credential keys, at any depth, and a secret path itself', () => {
    const changes = valueDiff('', { exec: { env: { A: 'old-secret' }, url: 'u1' }, password: 'p1' }, { exec: { env: { A: 'new-secret', B: { secretRef: 'S' } }, url: 'u2' }, password: 'p2' });
    expect(changes).toEqual([
      { path: 'exec.env.A', from: '***', to: '***' },
      { path: 'exec.env.B', from: undefined, to: '***' },
      { path: 'exec.url', from: '"u1"', to: '"u2"' },
      { path: 'password', from: '***', to: '***' },
    ]);
    expect(JSON.stringify(changes)).not.toMatch(/secret"|p1|p2/);
    expect(valueDiff('exec.headers', { a: '1' }, { a: '2' })).toEqual([{ path: 'exec.headers.a', from: '***', to: '***' }]);
    expect(valueDiff('note', 'a', 'b', { secret: true })).toEqual([{ path: 'note', from: '***', to: '***' }]);
  });

  it('cuts a long value with …', () => {
    const [change] = valueDiff('d', 'x'.repeat(500), 'y');
    expect(change?.from).toHaveLength(120);
    expect(change?.from?.endsWith('…')).toBe(true);
  });
});
